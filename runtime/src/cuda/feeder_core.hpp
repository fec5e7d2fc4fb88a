// The device feeder's state and its ordering rules: device buffers, their events, the copy
// stream, and the host batches whose copies are still in flight. Shared by the DeviceFeeder
// and the DeviceBatches it hands out (so a batch may outlive the feeder object).
//
// It talks to the GPU only through a CopyEngine (copy_engine.hpp) and includes no CUDA:
// production passes the CUDA engine, the unit tests a simulated one that completes copies
// late, so every rule below is checked without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cuda/copy_engine.hpp"
#include "stoker/cuda/cuda_feeder.hpp"
#include "stoker/loader/loader.hpp"

namespace stoker {

// One device buffer handed to the consumer (what a DeviceBatch shows).
struct HandedBatch {
  int buffer = -1;
  const std::byte* data = nullptr;  // device memory: samples
  const int64_t* labels = nullptr;  // device memory: labels
  // Shared, not pointed into the core: a DeviceBatch may outlive the feeder and its core.
  std::shared_ptr<const SampleSpec> spec;
  size_t size = 0, capacity = 0;
  uint64_t epoch = 0, number = 0;
};

class FeederCore {
 public:
  // `stats` names the GPU (gpu, device, depth, host_pinned); `timing`: time each copy.
  FeederCore(std::shared_ptr<CopyEngine> engine, FeederStats stats, bool timing, SampleSpec spec);
  ~FeederCore();  // frees the device buffers, events and stream (errors ignored)

  // The next batch of the loader's epoch, its copy queued (DeviceFeeder::next); nullopt at
  // the epoch's end, once every host batch went back to the loader.
  std::optional<HandedBatch> next(Loader& loader);
  // The consumer's side of one handed-out buffer (DeviceBatch's calls). wait_on() refuses a
  // stream of another GPU (no release point could be recorded on it); release() records
  // one on every stream the batch was waited on, and on `consumer_stream`; when it throws,
  // the buffer stays the consumer's, to be released again.
  void wait_on(int b, void* consumer_stream);
  void synchronize(int b);
  void release(int b, void* consumer_stream);
  // The last resort of a batch whose release() failed (its destructor): the buffer is
  // reused after the device's queued work.
  void release_after_device(int b);
  // Waits for every copy and returns every host batch (epoch end, shutdown).
  void drain();

  FeederStats stats();
  int device() const { return stats_.device; }
  int depth() const { return static_cast<int>(buffers_.size()); }
  void* stream() const { return stream_; }
  void* ready_event(int b) const { return buffers_[b].copied; }
  const std::string& where() const { return engine_->where(); }

 private:
  struct Buffer {
    std::byte* device = nullptr;  // samples at 0, labels at labels_offset_
    CopyEngine::Event start = nullptr, copied = nullptr;
    // Release points, one per stream the batch was read on; kept from batch to batch.
    std::vector<CopyEngine::Event> consumed;
    size_t consumed_pending = 0;  // release() recorded consumed[0, n): the next copy waits
    bool queued = false, held = false;
    std::vector<void*> read_on;  // every stream given to wait_on() since the hand-out
    std::optional<Batch> host;   // kept until `copied` has completed
    uint64_t copy_bytes = 0;
    size_t size = 0;
    uint64_t epoch = 0, number = 0;
    uint64_t issued = 0;  // order of the copies (one stream: they complete in this order)
  };
  // Host batches whose copies have completed go back to the loader's pool.
  void reap();
  // A buffer neither queued nor held by the consumer, its last copy done; -1 when none.
  int free_buffer();
  // Waits for the oldest copy into a buffer the consumer released, and returns that buffer;
  // -1 when the consumer holds every buffer.
  int await_released_buffer();
  // Queues the copy of `host` into buffer b (allocating the buffers on first use).
  void issue(int b, Batch&& host);
  bool queue_empty();
  HandedBatch hand_out();
  void add_input_wait(uint64_t ns);
  void allocate(size_t capacity);
  void finish_copy(Buffer& buf);    // after `copied` completed: host slot back, timing
  void destroy_handles() noexcept;  // the stream and every event (destructor, failed ctor)

  std::mutex mu_;
  const std::shared_ptr<CopyEngine> engine_;
  const bool timing_;
  const std::shared_ptr<const SampleSpec> spec_;
  size_t capacity_ = 0, labels_offset_ = 0;
  CopyEngine::Stream stream_ = nullptr;
  std::vector<Buffer> buffers_;
  std::vector<int> queue_;  // ring of queued buffer indices, oldest at head_
  size_t head_ = 0, queued_ = 0;
  uint64_t issued_ = 0;
  bool exhausted_ = false;         // the loader's epoch ended; drain the queued batches
  std::optional<Batch> unissued_;  // taken from the loader, its issue() failed
  FeederStats stats_;
};

}  // namespace stoker
