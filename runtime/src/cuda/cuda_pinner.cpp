#include "stoker/cuda/cuda_pinner.hpp"

#include "cuda/cuda_call.hpp"
#include "cuda/device_scope.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

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
  } catch (const Error& err) {
    if (why) *why = std::string("not page-locked: ") + err.what();
    return false;
  }
  if (e != cudaSuccess) {
    cuda::counted(cudaGetLastError());
    if (why) {
      *why = "not page-locked (" + std::to_string(bytes) +
             " bytes): " + cuda::describe("cudaHostRegister", e) +
             "; check the locked-memory limit (ulimit -l) or lower the prefetch depth";
    }
    return false;
  }
  device_ = gpu.device;
  return true;
}

void CudaHostPinner::unpin(void* base, size_t) noexcept {
  if (device_ < 0) return;
  if (cuda::counted(cudaHostUnregister(base)) != cudaSuccess) cuda::counted(cudaGetLastError());
  device_ = -1;
}

std::string CudaHostPinner::describe() const {
  return "cudaHostRegister (GPU " + (plan_.gpu.empty() ? std::string("none") : plan_.gpu) + ")";
}

}  // namespace stoker
