// Makes a device current for a scope and restores the caller's afterwards, so that the
// feeder working on the plan's GPU never changes which device the application uses.
#pragma once

#include <string>

#include "cuda/cuda_call.hpp"

namespace stoker::cuda {

class DeviceScope {
 public:
  DeviceScope(int device, const std::string& where) {
    check(counted(cudaGetDevice(&previous_)), "cudaGetDevice", where);
    if (previous_ != device) check(counted(cudaSetDevice(device)), "cudaSetDevice", where);
  }
  ~DeviceScope() {
    int now = previous_;
    if (counted(cudaGetDevice(&now)) == cudaSuccess && now != previous_) {
      counted(cudaSetDevice(previous_));
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace stoker::cuda
