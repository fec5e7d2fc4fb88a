// Simulated CUDA devices for the tests of DeviceScope and CudaEngine (tests only, never
// shipped): while a SimDevices lives, the runtime's calls on the thread's current device
// (cuda::device_calls(), device_scope.hpp) are its own. It keeps the runtime's rules there:
//   - each thread has its own current device; a thread that never chose one reads device 0;
//   - cudaSetDevice fails for a device that does not exist and leaves the current one;
//   - each device has one primary context, shared by every thread, made by the device's
//     first use on any thread (use()); under CUDA 12 and later cudaSetDevice makes it at
//     once, before it made nothing (CUDA 11.8, which torch still ships for the H200).
// Every cudaSetDevice is logged, so a test sees which device each call of stoker's ran on.
#pragma once

#if STOKER_HAVE_CUDA
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda/device_scope.hpp"

namespace stoker::test {

class SimDevices {
 public:
  // `count` devices; `cuda12`: cudaSetDevice makes the device's primary context.
  SimDevices(int count, bool cuda12);
  ~SimDevices();  // the runtime's own calls again
  SimDevices(const SimDevices&) = delete;
  SimDevices& operator=(const SimDevices&) = delete;

  // The application's calls on the calling thread.
  void set(int device);  // cudaSetDevice, expected to succeed
  int current();         // cudaGetDevice
  void use();            // a kernel or cudaMalloc: the current device's context is made
  bool context(int device);
  // The devices cudaSetDevice was given since the last call, on any thread, in order.
  std::vector<int> take_sets();

 private:
  static cudaError_t get_device(int* device);
  static cudaError_t set_device(int device);
  static bool context_active(int device);
  int& thread_device();  // -1: the thread never chose one

  const int count_;
  const uint64_t generation_;  // a thread's choice counts for this instance only
  cuda::DeviceCalls saved_;
  std::mutex mu_;
  std::vector<bool> contexts_;
  std::vector<int> sets_;
};

}  // namespace stoker::test
#endif  // STOKER_HAVE_CUDA
