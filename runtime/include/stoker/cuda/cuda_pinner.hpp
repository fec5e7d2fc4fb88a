// Page-locks the loader's batch arena for the plan's GPU (the HostPinner seam of
// host_pinner.hpp). The loader allocates the arena NUMA-local and first-touches it from
// its pinned workers; cudaHostRegister then locks those very pages in place, so the slots
// stay on the GPU's NUMA node and cudaMemcpyAsync from them is a true asynchronous DMA.
//
//   LoaderOptions opts;  opts.plan = plan;  opts.pinner = make_host_pinner(plan);
//
// Without a usable GPU (none in the plan, none visible, a build without CUDA) pin()
// refuses with the reason, the loader records it in stats().notes, and the host path
// runs on ordinary memory.
#pragma once

#include <memory>

#include "stoker/loader/host_pinner.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

#if STOKER_HAVE_CUDA
class CudaHostPinner : public HostPinner {
 public:
  explicit CudaHostPinner(Plan plan) : plan_(std::move(plan)) {}
  // cudaHostRegister(Portable) on the plan's GPU. No CUDA call when the plan has no GPU.
  bool pin(void* base, size_t bytes, std::string* why) override;
  void unpin(void* base, size_t bytes) noexcept override;
  std::string describe() const override;

 private:
  Plan plan_;
  int device_ = -1;  // the device pin() registered for, -1 before
};

// A CudaHostPinner for the plan; nullptr when the plan does not ask for pinned memory.
inline std::shared_ptr<HostPinner> make_host_pinner(const Plan& plan) {
  if (!plan.pin_memory) return nullptr;
  return std::make_shared<CudaHostPinner>(plan);
}
#else
inline std::shared_ptr<HostPinner> make_host_pinner(const Plan&) {
  return nullptr;
}
#endif

}  // namespace stoker
