// Which GPU this process may use, decided from its plan without touching CUDA needlessly.
//
// The rule: no CUDA call at all when the plan names no GPU; otherwise the CUDA
// runtime is probed once per process, lazily (cudaGetDeviceCount), and any error there
// means "no GPU" (no driver, fake GPUs of a test cluster, an empty CUDA_VISIBLE_DEVICES),
// so the host path keeps working. When CUDA does see GPUs but not the plan's one, that is
// a configuration error and plan_gpu() throws.
//
// Compiled with CUDA only; a build without it gets the inline fallbacks below, which say
// so, so callers need no #if of their own.
#pragma once

#include <cstdint>
#include <string>

#include "stoker/plan/plan.hpp"

namespace stoker {

struct GpuAvailability {
  bool usable = false;
  int device = -1;  // CUDA device ordinal (selected by PCI bus id), -1 when not usable
  std::string why;  // why not usable, one line; "" when usable
};

#if STOKER_HAVE_CUDA
inline constexpr bool kBuiltWithCuda = true;
// Throws stoker::Error (where: "STOKER_GPU=<bus id>") when CUDA sees GPUs but not the
// plan's GPU, listing the ones it sees.
GpuAvailability plan_gpu(const Plan& plan);
// CUDA runtime calls stoker has made in this process (tests check "none without a GPU").
uint64_t cuda_calls();
#else
inline constexpr bool kBuiltWithCuda = false;
inline GpuAvailability plan_gpu(const Plan& plan) {
  return {false, -1, plan.gpu.empty() ? "the plan names no GPU" : "stoker was built without CUDA"};
}
inline uint64_t cuda_calls() {
  return 0;
}
#endif

}  // namespace stoker
