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

class DeviceScope {
 public:
  DeviceScope(int device, const std::string& where) {
    check(counted(cudaGetDevice(&previous_)), "cudaGetDevice", where);
    if (previous_ != device) check(counted(cudaSetDevice(device)), "cudaSetDevice", where);
  }
  // A thread that never chose a device reads as "device 0" (cudaGetDevice's default), and
  // since CUDA 12 cudaSetDevice creates the device's primary context at once: restoring
  // device 0 there would cost every rank a context (hundreds of MiB) on GPU 0. So the
  // previous device is restored only when its context exists, i.e. when it was in use.
  ~DeviceScope() {
    int now = previous_;
    if (counted(cudaGetDevice(&now)) == cudaSuccess && now != previous_ &&
        primary_context_active(previous_)) {
      counted(cudaSetDevice(previous_));
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  ErrorSlotScope slot_;  // first: it looks at the slot before the scope's own calls
  int previous_ = 0;
};

}  // namespace stoker::cuda
