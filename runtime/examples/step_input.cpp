#include "step_input.hpp"

#if STOKER_HAVE_CUDA
#include "stoker/cuda/cuda_feeder.hpp"
#endif

namespace stoker::train {
namespace {

class HostInput : public StepInput {
 public:
  explicit HostInput(Loader& loader) : loader_(loader) {}
  std::optional<StepBatch> next() override {
    current_ = loader_.next();
    if (!current_) return std::nullopt;
    return StepBatch{current_->data(), current_->labels(), static_cast<int>(current_->size())};
  }
  void done() override { current_.reset(); }

 private:
  Loader& loader_;
  std::optional<Batch> current_;
};

#if STOKER_HAVE_CUDA
class DeviceInput : public StepInput {
 public:
  DeviceInput(Loader& loader, void* stream) : feeder_(loader), stream_(stream) {}
  std::optional<StepBatch> next() override {
    current_ = feeder_.next();
    if (!current_) return std::nullopt;
    current_->wait_on(stream_);  // the step's kernels start once the copy has landed
    return StepBatch{current_->data(), current_->labels(), static_cast<int>(current_->size())};
  }
  void done() override {
    if (current_) current_->release(stream_);
    current_.reset();
  }

 private:
  DeviceFeeder feeder_;
  void* stream_;
  std::optional<DeviceBatch> current_;
};
#endif

}  // namespace

std::unique_ptr<StepInput> host_input(Loader& loader) {
  return std::make_unique<HostInput>(loader);
}

#if STOKER_HAVE_CUDA
std::unique_ptr<StepInput> device_input(Loader& loader, void* stream) {
  return std::make_unique<DeviceInput>(loader, stream);
}
#endif

}  // namespace stoker::train
