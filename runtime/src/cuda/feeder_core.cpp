#include "cuda/feeder_core.hpp"

#include "cuda/cuda_call.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

namespace {
constexpr size_t kDeviceAlign = 256;  // cudaMalloc's own alignment; keeps labels aligned
size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}
}  // namespace

FeederCore::FeederCore(int device, std::string gpu, int depth, bool timing, SampleSpec spec,
                       bool host_pinned)
    : device_(device),
      where_("GPU " + gpu),
      timing_(timing),
      spec_(std::move(spec)),
      buffers_(depth),
      queue_(depth) {
  stats_.gpu = std::move(gpu);
  stats_.device = device;
  stats_.depth = depth;
  stats_.host_pinned = host_pinned;
  // Non-blocking: the copy stream never serialises with the legacy default stream; every
  // ordering it needs is expressed with events.
  cuda::check(cuda::counted(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)),
              "cudaStreamCreateWithFlags", where_);
  const unsigned copy_flags = timing_ ? cudaEventDefault : cudaEventDisableTiming;
  for (Buffer& b : buffers_) {
    cuda::check(cuda::counted(cudaEventCreateWithFlags(&b.copied, copy_flags)),
                "cudaEventCreateWithFlags", where_);
    cuda::check(cuda::counted(cudaEventCreateWithFlags(&b.consumed, cudaEventDisableTiming)),
                "cudaEventCreateWithFlags", where_);
    if (timing_) {
      cuda::check(cuda::counted(cudaEventCreate(&b.start)), "cudaEventCreate", where_);
    }
  }
}

FeederCore::~FeederCore() {
  // Destructors may run on any thread with any current device: set ours, ignore errors.
  int previous = 0;
  cuda::counted(cudaGetDevice(&previous));
  cuda::counted(cudaSetDevice(device_));
  if (stream_) cuda::counted(cudaStreamSynchronize(stream_));
  for (Buffer& b : buffers_) {
    b.host.reset();
    if (b.device) cuda::counted(cudaFree(b.device));
    for (cudaEvent_t e : {b.start, b.copied, b.consumed}) {
      if (e) cuda::counted(cudaEventDestroy(e));
    }
  }
  if (stream_) cuda::counted(cudaStreamDestroy(stream_));
  cuda::counted(cudaGetLastError());
  cuda::counted(cudaSetDevice(previous));
}

void FeederCore::allocate(size_t capacity) {
  capacity_ = capacity;
  labels_offset_ = round_up(capacity * spec_.bytes(), kDeviceAlign);
  const size_t bytes = labels_offset_ + capacity * sizeof(int64_t);
  size_t free_bytes = 0, total_bytes = 0;
  cuda::check(cuda::counted(cudaMemGetInfo(&free_bytes, &total_bytes)), "cudaMemGetInfo", where_);
  if (bytes * buffers_.size() > free_bytes) {
    throw Error(where_,
                "no room for " + std::to_string(buffers_.size()) + " device buffers of " +
                    std::to_string(bytes) + " bytes: " + std::to_string(free_bytes) +
                    " bytes free of " + std::to_string(total_bytes),
                "use a smaller batch or a lower feeder depth");
  }
  for (Buffer& b : buffers_) {
    void* p = nullptr;
    cuda::check(cuda::counted(cudaMalloc(&p, bytes)), "cudaMalloc", where_);
    b.device = static_cast<std::byte*>(p);
  }
  stats_.buffer_bytes = bytes;
}

void FeederCore::finish_copy(Buffer& buf) {
  if (timing_) {
    float ms = 0;
    cuda::check(cuda::counted(cudaEventElapsedTime(&ms, buf.start, buf.copied)),
                "cudaEventElapsedTime", where_);
    stats_.h2d_ns += static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
    stats_.timed_bytes += buf.copy_bytes;
  }
  buf.host.reset();  // the slot goes back to the loader's pool
}

void FeederCore::reap() {
  std::lock_guard lock(mu_);
  for (Buffer& b : buffers_) {
    if (!b.host) continue;
    cudaError_t e = cuda::counted(cudaEventQuery(b.copied));
    if (e == cudaErrorNotReady) continue;
    cuda::check(e, "cudaEventQuery", where_);
    finish_copy(b);
  }
}

void FeederCore::drain() {
  std::lock_guard lock(mu_);
  for (Buffer& b : buffers_) {
    if (!b.host) continue;
    cuda::check(cuda::counted(cudaEventSynchronize(b.copied)), "cudaEventSynchronize", where_);
    finish_copy(b);
  }
}

int FeederCore::free_buffer() {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (!buffers_[i].queued && !buffers_[i].held) return static_cast<int>(i);
  }
  return -1;
}

bool FeederCore::queue_empty() {
  std::lock_guard lock(mu_);
  return queued_ == 0;
}

void FeederCore::issue(int index, Batch&& host) {
  std::lock_guard lock(mu_);
  if (capacity_ == 0) allocate(host.capacity());
  if (host.capacity() != capacity_) {
    throw Error(where_,
                "batch of capacity " + std::to_string(host.capacity()) + " after batches of " +
                    std::to_string(capacity_),
                "feed one loader (one batch size) per DeviceFeeder");
  }
  Buffer& b = buffers_[index];
  if (b.consumed_pending) {
    // The consumer's kernels that read this buffer must be done before it is overwritten.
    cuda::check(cuda::counted(cudaStreamWaitEvent(stream_, b.consumed, 0)), "cudaStreamWaitEvent",
                where_);
    b.consumed_pending = false;
  }
  if (timing_)
    cuda::check(cuda::counted(cudaEventRecord(b.start, stream_)), "cudaEventRecord", where_);
  const size_t data_bytes = host.bytes(), label_bytes = host.size() * sizeof(int64_t);
  if (data_bytes) {
    cuda::check(cuda::counted(cudaMemcpyAsync(b.device, host.data(), data_bytes,
                                              cudaMemcpyHostToDevice, stream_)),
                "cudaMemcpyAsync", where_);
  }
  if (label_bytes) {
    cuda::check(cuda::counted(cudaMemcpyAsync(b.device + labels_offset_, host.labels(), label_bytes,
                                              cudaMemcpyHostToDevice, stream_)),
                "cudaMemcpyAsync", where_);
  }
  cuda::check(cuda::counted(cudaEventRecord(b.copied, stream_)), "cudaEventRecord", where_);
  b.copy_bytes = data_bytes + label_bytes;
  b.size = host.size();
  b.epoch = host.epoch();
  b.number = host.number();
  b.host = std::move(host);
  b.queued = true;
  queue_[(head_ + queued_) % queue_.size()] = index;
  ++queued_;
  stats_.bytes += b.copy_bytes;
}

DeviceBatch FeederCore::hand_out(const std::shared_ptr<FeederCore>& self) {
  std::lock_guard lock(mu_);
  const int index = queue_[head_];
  head_ = (head_ + 1) % queue_.size();
  --queued_;
  Buffer& b = buffers_[index];
  b.queued = false;
  b.held = true;
  ++stats_.batches;
  DeviceBatch out;
  out.core_ = self;
  out.buffer_ = index;
  out.data_ = b.device;
  out.shape_ = {reinterpret_cast<const int64_t*>(b.device + labels_offset_),
                &spec_,
                b.size,
                capacity_,
                b.epoch,
                b.number};
  return out;
}

void FeederCore::release(int index, void* consumer_stream) {
  std::lock_guard lock(mu_);
  Buffer& b = buffers_[index];
  cuda::check(
      cuda::counted(cudaEventRecord(b.consumed, static_cast<cudaStream_t>(consumer_stream))),
      "cudaEventRecord", where_, "release a DeviceBatch with a stream of its GPU");
  b.consumed_pending = true;
  b.held = false;
}

void FeederCore::add_input_wait(uint64_t ns) {
  std::lock_guard lock(mu_);
  stats_.input_wait_ns += ns;
}

FeederStats FeederCore::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace stoker
