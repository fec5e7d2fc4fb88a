#include "cuda/device_scope.hpp"

#include <cuda.h>  // the driver's types only; the function comes from the runtime

namespace stoker::cuda {

namespace {

using PrimaryCtxGetState = CUresult (*)(CUdevice, unsigned int*, int*);

PrimaryCtxGetState primary_ctx_get_state() {
  static const PrimaryCtxGetState fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t e = counted(cudaGetDriverEntryPointByVersion(
        "cuDevicePrimaryCtxGetState", &p, 7000, cudaEnableDefault, &found));
#else
    const cudaError_t e = counted(
        cudaGetDriverEntryPoint("cuDevicePrimaryCtxGetState", &p, cudaEnableDefault, &found));
#endif
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      clear_own_error();
      p = nullptr;
    }
    return reinterpret_cast<PrimaryCtxGetState>(p);
  }();
  return fn;
}

}  // namespace

bool primary_context_active(int device) {
  const PrimaryCtxGetState get_state = primary_ctx_get_state();
  if (!get_state) return true;
  unsigned int flags = 0;
  int active = 0;
  // A runtime ordinal is the driver's device ordinal (both count the visible devices).
  if (get_state(static_cast<CUdevice>(device), &flags, &active) != CUDA_SUCCESS) return true;
  return active != 0;
}

DeviceCalls& device_calls() {
  static DeviceCalls calls{cudaGetDevice, cudaSetDevice, primary_context_active,
                           CUDART_VERSION >= 12000};
  return calls;
}

int current_device(const std::string& where) {
  int device = 0;
  check(counted(device_calls().get(&device)), "cudaGetDevice", where);
  return device;
}

DeviceScope::DeviceScope(int device, const std::string& where) {
  previous_ = current_device(where);
  if (previous_ != device) check(counted(device_calls().set(device)), "cudaSetDevice", where);
}

DeviceScope::~DeviceScope() {
  const DeviceCalls& calls = device_calls();
  int now = previous_;
  if (counted(calls.get(&now)) == cudaSuccess && now != previous_ &&
      (!calls.set_creates_context || calls.context_active(previous_))) {
    counted(calls.set(previous_));
  }
}

}  // namespace stoker::cuda
