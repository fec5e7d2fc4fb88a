#include "cuda/cuda_call.hpp"
#include "cuda/device_scope.hpp"
#include "cuda/feeder_core.hpp"
#include "stoker/common/error.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {

// ---- DeviceBatch

DeviceBatch::DeviceBatch(DeviceBatch&& o) noexcept {
  *this = std::move(o);
}

DeviceBatch& DeviceBatch::operator=(DeviceBatch&& o) noexcept {
  if (this != &o) {
    release_unreleased();
    core_ = std::move(o.core_);
    buffer_ = std::exchange(o.buffer_, -1);
    data_ = o.data_;
    spec_ = std::move(o.spec_);  // the same object: shape_.spec stays valid
    shape_ = o.shape_;
  }
  return *this;
}

DeviceBatch::DeviceBatch(std::shared_ptr<FeederCore> core, const HandedBatch& h)
    : core_(std::move(core)), buffer_(h.buffer), data_(h.data), spec_(h.spec) {
  shape_ = {h.labels, spec_.get(), h.size, h.capacity, h.epoch, h.number};
}

DeviceBatch make_device_batch(std::shared_ptr<FeederCore> core, const HandedBatch& handed) {
  return DeviceBatch(std::move(core), handed);
}

DeviceBatch::~DeviceBatch() {
  release_unreleased();
}

// A batch dropped without release(): released as release() without a stream is (on the
// streams given to wait_on(), else after the device's queued work; FeederCore::release).
// Should that fail, the buffer is still given back after the device's work: a buffer held
// by no batch would be lost to the feeder for good.
void DeviceBatch::release_unreleased() noexcept {
  try {
    release();
  } catch (...) {
    try {
      core_->release_after_device(buffer_);
    } catch (...) {
      // A destructor must not throw; the feeder's next() reports the CUDA error through
      // its own calls.
    }
    core_.reset();
  }
}

void* DeviceBatch::stream() const {
  return core_ ? core_->stream() : nullptr;
}

void* DeviceBatch::ready_event() const {
  return core_ ? core_->ready_event(buffer_) : nullptr;
}

void DeviceBatch::wait_on(void* consumer_stream) const {
  if (core_) core_->wait_on(buffer_, consumer_stream);
}

void DeviceBatch::synchronize() const {
  if (core_) core_->synchronize(buffer_);
}

// The batch lets go of the core only once the release succeeded: a release that threw
// (a stream of another GPU) leaves the buffer with this batch, to be released again.
void DeviceBatch::release(void* consumer_stream) {
  if (!core_) return;
  core_->release(buffer_, consumer_stream);
  core_.reset();
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
  FeederStats identity;
  identity.gpu = plan.gpu;
  identity.device = gpu.device;
  identity.depth = depth;
  identity.host_pinned = loader.stats().pinned;
  core_ = std::make_shared<FeederCore>(make_cuda_engine(gpu.device, "GPU " + plan.gpu),
                                       std::move(identity), options.timing, loader.spec());
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
  // One device switch for the whole call rather than one per engine call.
  cuda::DeviceScope scope(core_->device(), core_->where());
  std::optional<HandedBatch> handed = core_->next(loader_);
  if (!handed) return std::nullopt;
  return make_device_batch(core_, *handed);
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
