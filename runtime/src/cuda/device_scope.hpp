// Makes a device current for a scope and restores the caller's afterwards, so that the
// feeder working on the plan's GPU never changes which device the application uses.
#pragma once

#include <string>

#include "cuda/cuda_call.hpp"

namespace stoker::cuda {

// Whether `device`'s primary context exists (cuDevicePrimaryCtxGetState, through the
// runtime's driver entry point: the static cudart links no libcuda). Asking creates none.
// True when the driver cannot be asked (the old behaviour: restore).
bool primary_context_active(int device);

// The runtime's calls on the thread's current device (cudaGetDevice, cudaSetDevice), whether
// a device's primary context exists, and whether cudaSetDevice creates that context (CUDA 12
// and later; before, the context came with the device's first use). The unit tests put
// simulated devices in their place (tests/unit/cuda/sim_devices.hpp).
struct DeviceCalls {
  cudaError_t (*get)(int* device);
  cudaError_t (*set)(int device);
  bool (*context_active)(int device);
  bool set_creates_context;
};
DeviceCalls& device_calls();

// The device the calling thread works on now (cudaGetDevice); throws naming `where`.
int current_device(const std::string& where);

class DeviceScope {
 public:
  DeviceScope(int device, const std::string& where);
  // A thread that never chose a device reads as "device 0" (cudaGetDevice's default), and
  // since CUDA 12 cudaSetDevice creates the device's primary context at once: restoring
  // device 0 there would cost every rank a context (hundreds of MiB) on GPU 0. So under
  // CUDA 12 the previous device is restored only when its context exists, i.e. when it was
  // in use. Before CUDA 12 setting a device creates nothing, and it is always restored: a
  // device the caller chose but has not used yet has no context either.
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  ErrorSlotScope slot_;  // first: it looks at the slot before the scope's own calls
  int previous_ = 0;
};

}  // namespace stoker::cuda
