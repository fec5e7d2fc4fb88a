// The seam between the device feeder's bookkeeping (feeder_core) and the GPU: the few
// operations of the CUDA runtime the feeder needs, on opaque handles, so the feeder's
// ordering rules can be checked without a GPU. In production the engine is CUDA's
// (cuda_engine.cpp, make_cuda_engine); tests/unit/cuda/ has a simulated one whose copies and
// events complete later, on its own threads, reading the source when they complete, as DMA
// does. This header includes no CUDA, so feeder_core builds (and its tests run) without it.
//
// The semantics are the CUDA runtime's, and every implementation must keep them:
//   - work queued on one stream runs in order; streams run concurrently with each other and
//     with the host, and the legacy default stream (nullptr) is not ordered with the
//     feeder's non-blocking streams;
//   - copy() returns before the copy: its source must stay untouched until an event
//     recorded after it has completed;
//   - record() captures the stream's work queued so far; done() and wait() look at the last
//     record; stream_wait() makes a stream wait for the record in place when it is called;
//   - an event is recorded only on a stream of its own GPU (cudaEventRecord fails on another
//     GPU's stream), while a stream may wait for an event of any GPU.
// Each call throws stoker::Error (naming the GPU) on a failure; the destroy_*() calls and
// deallocate() never throw.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace stoker {

class CopyEngine {
 public:
  using Stream = void*;  // cudaStream_t; nullptr: the legacy default stream
  using Event = void*;   // cudaEvent_t

  virtual ~CopyEngine() = default;
  virtual const std::string& where() const = 0;  // "GPU <bus id>" for error messages

  virtual Stream create_stream() = 0;  // non-blocking
  // Whether `s` is a stream of the engine's GPU. The special handles (nullptr, the legacy
  // and per-thread default streams) name the default streams of the device the calling
  // thread works on: they are when that is the engine's GPU. A stream whose GPU cannot be
  // asked is taken as one.
  virtual bool on_device(Stream s) = 0;
  virtual Event create_event(bool timing) = 0;  // timing: elapsed_ms() may be asked
  virtual void destroy_stream(Stream s) noexcept = 0;
  virtual void destroy_event(Event e) noexcept = 0;

  // Device memory: how much is free (and the total), one block, its release.
  virtual size_t free_bytes(size_t* total) = 0;
  virtual std::byte* allocate(size_t bytes) = 0;
  virtual void deallocate(std::byte* device) noexcept = 0;

  // Queues host -> device `bytes` from `host` (page-locked or not) on `s`.
  virtual void copy(std::byte* device, const std::byte* host, size_t bytes, Stream s) = 0;
  // `todo` says what to do when it fails (a stream of another GPU, say).
  virtual void record(Event e, Stream s, const char* todo = "") = 0;
  virtual void stream_wait(Stream s, Event e, const char* todo = "") = 0;
  virtual bool done(Event e) = 0;  // the last record has completed (never blocks)
  virtual void wait(Event e) = 0;  // blocks the host until it has
  virtual double elapsed_ms(Event from, Event to) = 0;  // both timing events, both done
  virtual void synchronize(Stream s) = 0;  // blocks until `s` has run what is queued on it
  virtual void synchronize_device() = 0;   // ... every stream of the device
};

// The CUDA runtime's engine on device `device` (built with CUDA only). Each call makes the
// device current for itself (cuda/device_scope.hpp), so the engine may be used from any
// thread, whatever device that thread works on.
std::shared_ptr<CopyEngine> make_cuda_engine(int device, std::string where);

}  // namespace stoker
