#include "stoker/cuda/cuda_pinner.hpp"

#include "cuda/cuda_call.hpp"
#include "cuda/device_scope.hpp"
#include "stoker/common/error.hpp"
#include "stoker/cuda/cuda_device.hpp"

namespace stoker {

namespace {
// What to do about a failed cudaHostRegister. The driver pins the pages itself: the
// locked-memory limit (ulimit -l) does not apply, so it is not the thing to raise.
std::string register_hint(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return "the driver could not page-lock that much host memory: lower the prefetch depth "
             "or the batch size, or leave more host memory free";
    case cudaErrorHostMemoryAlreadyRegistered:
      return "part of the range is registered already (by another pinner in this process)";
    case cudaErrorNotSupported:
      return "this system cannot page-lock memory it did not allocate (cudaHostRegister)";
    default:
      return "the loader runs on pageable memory (copies are staged by the driver)";
  }
}
}  // namespace

bool CudaHostPinner::pin(void* base, size_t bytes, std::string* why) {
  GpuAvailability gpu;
  try {
    gpu = plan_gpu(plan_);
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
  if (!gpu.usable) {
    if (why) *why = "not page-locked: " + gpu.why;
    return false;
  }
  // Register under the plan's device so the pages map into its context first; Portable
  // makes them pinned for every context (another device, a framework's own context). The
  // caller's current device is restored: the application (or torch) keeps its own.
  cudaError_t e = cudaSuccess;
  try {
    cuda::DeviceScope on_plan_gpu(gpu.device, "CudaHostPinner::pin");
    e = cuda::counted(cudaHostRegister(base, bytes, cudaHostRegisterPortable));
    if (e != cudaSuccess) cuda::clear_own_error();
  } catch (const Error& err) {
    if (why) *why = std::string("not page-locked: ") + err.what();
    return false;
  }
  if (e != cudaSuccess) {
    if (why) {
      *why = "not page-locked (" + std::to_string(bytes) +
             " bytes): " + cuda::describe("cudaHostRegister", e) + "; " + register_hint(e);
    }
    return false;
  }
  device_ = gpu.device;
  return true;
}

void CudaHostPinner::unpin(void* base, size_t) noexcept {
  if (device_ < 0) return;
  // Under the device pin() registered for: the last owner of the arena may be any thread,
  // and on one that never chose a device the runtime would create a context on GPU 0 for
  // this call (DeviceScope restores nothing there, see device_scope.hpp).
  try {
    cuda::DeviceScope on_plan_gpu(device_, "CudaHostPinner::unpin");
    if (cuda::counted(cudaHostUnregister(base)) != cudaSuccess) cuda::clear_own_error();
  } catch (...) {
  }
  device_ = -1;
}

std::string CudaHostPinner::describe() const {
  return "cudaHostRegister (GPU " + (plan_.gpu.empty() ? std::string("none") : plan_.gpu) + ")";
}

}  // namespace stoker
