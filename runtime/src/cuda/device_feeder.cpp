#include <algorithm>
#include <chrono>

#include "cuda/cuda_call.hpp"
#include "cuda/device_scope.hpp"
#include "cuda/feeder_core.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_feeder.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

// ---- DeviceBatch

DeviceBatch::DeviceBatch(DeviceBatch&& o) noexcept {
  *this = std::move(o);
}

DeviceBatch& DeviceBatch::operator=(DeviceBatch&& o) noexcept {
  if (this != &o) {
    release_unreleased();
    core_ = std::move(o.core_);
    consumer_stream_ = o.consumer_stream_;
    waited_ = o.waited_;
    buffer_ = std::exchange(o.buffer_, -1);
    data_ = o.data_;
    shape_ = o.shape_;
  }
  return *this;
}

DeviceBatch::~DeviceBatch() {
  release_unreleased();
}

// A batch dropped without release(stream): its buffer may be reused only after the kernels
// that read it. Those ran on the stream given to wait_on(); without one the feeder cannot
// know the stream (a non-blocking one does not order with the default stream), so it waits
// for the whole device once rather than risk overwriting data still being read.
void DeviceBatch::release_unreleased() noexcept {
  if (!core_) return;
  try {
    if (!waited_) {
      cuda::DeviceScope scope(core_->device(), core_->where());
      cuda::counted(cudaDeviceSynchronize());
    }
    release(consumer_stream_);
  } catch (...) {
    // A destructor must not throw; the buffer stays marked as held, and the feeder's
    // next() reports the CUDA error through its own calls.
  }
}

void* DeviceBatch::stream() const {
  return core_ ? core_->stream() : nullptr;
}

void* DeviceBatch::ready_event() const {
  return core_ ? core_->ready_event(buffer_) : nullptr;
}

void DeviceBatch::wait_on(void* consumer_stream) const {
  if (!core_) return;
  consumer_stream_ = consumer_stream;  // where the batch is read: release there if dropped
  waited_ = true;
  cuda::DeviceScope scope(core_->device(), core_->where());
  cuda::check(cuda::counted(cudaStreamWaitEvent(static_cast<cudaStream_t>(consumer_stream),
                                                core_->ready_event(buffer_), 0)),
              "cudaStreamWaitEvent", core_->where(), "pass a stream of the batch's GPU");
}

void DeviceBatch::synchronize() const {
  if (!core_) return;
  cuda::check(cuda::counted(cudaEventSynchronize(core_->ready_event(buffer_))),
              "cudaEventSynchronize", core_->where());
}

void DeviceBatch::release(void* consumer_stream) {
  if (!core_) return;
  std::shared_ptr<FeederCore> core = std::move(core_);
  cuda::DeviceScope scope(core->device(), core->where());
  core->release(buffer_, consumer_stream);
}

// ---- DeviceFeeder

DeviceFeeder::DeviceFeeder(Loader& loader, DeviceFeederOptions options) : loader_(loader) {
  const Plan& plan = loader.plan();
  if (plan.gpu.empty()) {
    throw Error("plan", "names no GPU, so there is nothing to feed",
                "use the loader's host batches, or run where the plan has a GPU");
  }
  const GpuAvailability gpu = plan_gpu(plan);  // throws when the GPU is not visible
  if (!gpu.usable) {
    throw Error("STOKER_GPU=" + plan.gpu, gpu.why, "use the loader's host batches (CPU path)");
  }
  const int depth = options.depth ? options.depth : kDefaultDepth;
  if (depth < 2) {
    throw Error("DeviceFeederOptions::depth",
                "is " + std::to_string(depth) + "; copies overlap compute only with 2 or more",
                "use 2 or more, or 0 for the plan's");
  }
  cuda::DeviceScope scope(gpu.device, "GPU " + plan.gpu);
  core_ = std::make_shared<FeederCore>(gpu.device, plan.gpu, depth, options.timing, loader.spec(),
                                       loader.stats().pinned);
}

DeviceFeeder::~DeviceFeeder() {
  try {
    cuda::DeviceScope scope(core_->device(), core_->where());
    core_->drain();
  } catch (...) {
    // Nothing more to do: the core's destructor synchronises and frees what it can.
  }
}

std::optional<DeviceBatch> DeviceFeeder::next() {
  using clock = std::chrono::steady_clock;
  cuda::DeviceScope scope(core_->device(), core_->where());
  core_->reap();
  // Keep free buffers busy with batches the loader already has: their copies overlap the
  // consumer's work on this one. Wait for the loader only when no copied batch is queued.
  for (int b = core_->free_buffer(); b >= 0 && !exhausted_; b = core_->free_buffer()) {
    if (!core_->queue_empty() && !loader_.next_ready()) break;
    const auto t0 = clock::now();
    std::optional<Batch> host = loader_.next();
    core_->add_input_wait(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
    if (!host) {
      exhausted_ = true;
      break;
    }
    core_->issue(b, std::move(*host));
  }
  if (core_->queue_empty()) {
    if (!exhausted_) {
      throw Error("DeviceFeeder::next",
                  "the consumer holds all " + std::to_string(depth()) + " device buffers",
                  "release() a DeviceBatch before asking for the next one, or use a deeper feeder");
    }
    core_->drain();  // epoch end: every host slot back to the loader
    exhausted_ = false;
    return std::nullopt;
  }
  return core_->hand_out(core_);
}

FeederStats DeviceFeeder::stats() const {
  return core_->stats();
}
int DeviceFeeder::device() const {
  return core_->device();
}
int DeviceFeeder::depth() const {
  return core_->depth();
}

}  // namespace stoker
