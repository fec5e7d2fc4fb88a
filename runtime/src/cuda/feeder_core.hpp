// The device feeder's state: device buffers, their events, the copy stream, and the host
// batches whose copies are still in flight. Shared by the DeviceFeeder and the
// DeviceBatches it hands out (so a batch may outlive the feeder object).
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <optional>
#include <vector>

#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {

class FeederCore {
 public:
  FeederCore(int device, std::string gpu, int depth, bool timing, SampleSpec spec,
             bool host_pinned);
  ~FeederCore();  // frees the device buffers, events and stream (errors ignored)

  // Host batches whose copies have completed go back to the loader's pool.
  void reap();
  // A buffer neither queued nor held by the consumer; -1 when none.
  int free_buffer();
  // Queues the copy of `host` into buffer b (allocating the buffers on first use).
  void issue(int b, Batch&& host);
  bool queue_empty();
  // Hands the oldest queued buffer to the consumer.
  DeviceBatch hand_out(const std::shared_ptr<FeederCore>& self);
  void release(int b, void* consumer_stream);
  // Waits for every copy and returns every host batch (epoch end, shutdown).
  void drain();
  void add_input_wait(uint64_t ns);

  FeederStats stats();
  int device() const { return device_; }
  int depth() const { return static_cast<int>(buffers_.size()); }
  cudaStream_t stream() const { return stream_; }
  cudaEvent_t ready_event(int b) const { return buffers_[b].copied; }
  const std::string& where() const { return where_; }

 private:
  struct Buffer {
    std::byte* device = nullptr;  // samples at 0, labels at labels_offset_
    cudaEvent_t start = nullptr, copied = nullptr, consumed = nullptr;
    bool queued = false, held = false;
    bool consumed_pending = false;  // release() recorded `consumed`; the next copy waits on it
    std::optional<Batch> host;      // kept until `copied` has completed
    uint64_t copy_bytes = 0;
    size_t size = 0;
    uint64_t epoch = 0, number = 0;
  };
  void allocate(size_t capacity);
  void finish_copy(Buffer& buf);  // after `copied` completed: timing, host slot back

  std::mutex mu_;
  const int device_;
  const std::string where_;  // "GPU <bus id>" for error messages
  const bool timing_;
  const SampleSpec spec_;
  size_t capacity_ = 0, labels_offset_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<Buffer> buffers_;
  std::vector<int> queue_;  // ring of queued buffer indices, oldest at head_
  size_t head_ = 0, queued_ = 0;
  FeederStats stats_;
};

}  // namespace stoker
