// The device feeder: copies each ready batch of a Loader to the plan's GPU, asynchronously.
//
//   LoaderOptions lo;  lo.plan = plan;  lo.pinner = make_host_pinner(plan);
//   lo.held_batches = DeviceFeeder::kDefaultDepth;    // the feeder holds host batches
//   auto loader = Loader::for_this_process(source, transform, lo);  // until their copies end
//   DeviceFeeder feeder(*loader);
//   loader.set_epoch(e);  loader.start_epoch();
//   while (auto b = feeder.next()) {
//     b->wait_on(stream);                 // my kernels on `stream` wait for the copy
//     kernel<<<..., stream>>>(b->as<float>(), b->labels(), b->size());
//     b->release(stream);                 // the buffer is reused once `stream` is past here
//   }
//
// Mechanism: the feeder owns `depth` device buffers (double-buffered by default, each as
// large as one batch) and one non-blocking copy stream
// on the GPU chosen by PCI bus id (plan.gpu, cudaDeviceGetByPCIBusId). For each host batch
// it issues cudaMemcpyAsync of the samples and labels on that stream and records an event.
// The host Batch (its pinned arena slot) goes back to the loader's pool only once that
// event has completed (the DMA reads the slot until then), and its device buffer takes no
// other batch before; a device buffer is overwritten only after the consumer's release
// point on its stream (cudaStreamWaitEvent). next() blocks while the loader has no batch
// ready (counted as input wait), and for a copy only when no batch is left to hand out
// and the buffers the consumer gave back all have their copy still in flight.
// The ordering rules live in FeederCore (src/cuda/feeder_core.cpp), which drives CUDA
// through a CopyEngine seam so that they are checked without a GPU too.
//
// The feeder is built with CUDA only (STOKER_HAVE_CUDA; FeederStats always). The
// constructor makes no CUDA call when the plan names no GPU: it throws, and the caller
// stays on the host path.
//
// Implemented in src/cuda/: device_feeder.cpp, feeder_core.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stoker/loader/loader.hpp"

namespace stoker {

// What the feeder did (also kept by its CUDA-free core, so outside the guard below).
struct FeederStats {
  std::string gpu;            // PCI bus id
  int device = -1;            // CUDA ordinal
  int depth = 0;              // device buffers
  uint64_t buffer_bytes = 0;  // bytes of one device buffer (samples + labels)
  uint64_t batches = 0;       // batches handed to the consumer
  uint64_t bytes = 0;         // bytes copied host -> device (samples + labels)
  uint64_t h2d_ns = 0;        // GPU time of those copies (CUDA events; 0 without timing)
  uint64_t timed_bytes = 0;   // bytes of the copies whose time is in h2d_ns
  // Host time next() blocked in Loader::next(). Not in it: the GPU-side waits wait_on()
  // queues (the consumer's kernels waiting for a copy), which no host clock sees, and the
  // host time of copies from a pageable arena (host_pinned false), which cudaMemcpyAsync
  // stages on the host inside next() (see DeviceFeeder::next).
  uint64_t input_wait_ns = 0;
  bool host_pinned = false;      // the loader's arena is page-locked
  double h2d_gb_per_s() const {  // copy bandwidth, GB/s (1e9 bytes)
    return h2d_ns ? static_cast<double>(timed_bytes) / static_cast<double>(h2d_ns) : 0.0;
  }
};

#if STOKER_HAVE_CUDA

struct DeviceFeederOptions {
  int depth = 0;       // device buffers (2 or more); 0: DeviceFeeder::kDefaultDepth
  bool timing = true;  // time each copy with CUDA events (FeederStats::h2d_ns)
};

class FeederCore;
struct HandedBatch;

// One batch on the GPU. Move-only; its device buffer returns to the feeder at release()
// (or destruction). May outlive the DeviceFeeder object.
class DeviceBatch : public BatchShape {
 public:
  DeviceBatch() = default;
  DeviceBatch(DeviceBatch&& o) noexcept;
  DeviceBatch& operator=(DeviceBatch&& o) noexcept;
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;
  // Without release(): releases on the streams given to wait_on(), or, when none was or
  // that fails, after the device has finished its queued work. Errors are swallowed here.
  ~DeviceBatch();
  explicit operator bool() const { return core_ != nullptr; }

  // Device pointers: size() samples of spec().bytes() each, contiguous; int64 labels
  // (labels() is a device pointer here).
  const void* data() const { return data_; }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }

  // The copy's stream and event (cudaStream_t, cudaEvent_t): the event completes when the
  // samples and labels are on the GPU.
  void* stream() const;
  void* ready_event() const;
  // Makes `consumer_stream` (a cudaStream_t; nullptr: the default stream) wait for the
  // copy, without blocking the host. Throws stoker::Error for a stream of another GPU (a
  // release point could not be recorded on it); the default-stream handles (nullptr,
  // cudaStreamLegacy, cudaStreamPerThread) name the calling thread's current device's, so
  // they are refused too while the thread works on another GPU.
  void wait_on(void* consumer_stream) const;
  void synchronize() const;  // blocks the host until the copy is done
  // Gives the buffer back: the feeder reuses it once `consumer_stream` and every stream
  // given to wait_on() have run everything queued on them so far (the kernels that read the
  // batch). Without a stream (nullptr): the streams given to wait_on(), or, when none was,
  // the feeder waits for the device's queued work here (the legacy default stream is not
  // ordered with non-blocking streams, so it cannot stand for "the consumer's stream").
  // Idempotent. When it throws (a stream of another GPU), the batch keeps its buffer and may
  // be released again.
  void release(void* consumer_stream = nullptr);

 private:
  friend DeviceBatch make_device_batch(std::shared_ptr<FeederCore>, const HandedBatch&);
  DeviceBatch(std::shared_ptr<FeederCore> core, const HandedBatch& handed);
  void release_unreleased() noexcept;
  std::shared_ptr<FeederCore> core_;
  int buffer_ = -1;
  const void* data_ = nullptr;
  // Owned with the core, not pointed into it: spec() stays valid after the feeder is gone.
  std::shared_ptr<const SampleSpec> spec_;
};

// A handed-out buffer of the feeder's core as a DeviceBatch (DeviceFeeder::next; the unit
// tests drive the core on a simulated GPU through it).
DeviceBatch make_device_batch(std::shared_ptr<FeederCore> core, const HandedBatch& handed);

class DeviceFeeder {
 public:
  // Feeds `loader` (which must outlive the feeder) to loader.plan().gpu. Throws
  // stoker::Error when the plan names no GPU, when no GPU is usable (with the reason),
  // when the plan's GPU is not visible (naming it and the visible ones), or for a depth < 2.
  explicit DeviceFeeder(Loader& loader, DeviceFeederOptions options = {});
  // Waits for its copies and returns the host batches. The device buffers are freed when
  // the last DeviceBatch is released too; cudaFree then waits for all the work queued on
  // the GPU, the application's kernels included (abort a communicator whose peer died
  // before this runs: its allreduce would never end).
  ~DeviceFeeder();
  DeviceFeeder(const DeviceFeeder&) = delete;
  DeviceFeeder& operator=(const DeviceFeeder&) = delete;

  // The next batch of the loader's current epoch, on the GPU (its copy may still be in
  // flight: wait_on() or synchronize() before reading). nullopt at the epoch's end, as
  // Loader::next(): start the next one on the loader (set_epoch + start_epoch), then call
  // next() again. Throws what Loader::next() throws, and stoker::Error for a failed CUDA
  // call or a GPU without room for the buffers.
  // With a pageable arena (the pin failed: FeederStats::host_pinned false) the host stages
  // each copy, after the copy stream's earlier work, before cudaMemcpyAsync returns: inside
  // this call and under the feeder's lock, so next() may take a whole copy's time that
  // input_wait_ns does not count. Pin the arena (LoaderOptions::pinner, make_host_pinner).
  std::optional<DeviceBatch> next();

  FeederStats stats() const;
  int device() const;
  int depth() const;

  // Device buffers by default: double buffering, whatever the plan's prefetch. The device
  // queue only overlaps the copy of batch n+1 with the consumer's work on batch n; the
  // producers' ups and downs are absorbed by the host ring, whose depth is the plan's
  // (prefetch, grown by the controller up to prefetch_max), so a deeper device queue would
  // only hold more GPU memory (outside the plan's budget) without feeding faster, and
  // deriving it from prefetch would re-cap the plan's depth a second time. The feeder
  // holds up to this many host batches while their copies run: set
  // LoaderOptions::held_batches to at least this.
  static constexpr int kDefaultDepth = 2;

 private:
  Loader& loader_;
  std::shared_ptr<FeederCore> core_;
};

#endif  // STOKER_HAVE_CUDA

}  // namespace stoker
