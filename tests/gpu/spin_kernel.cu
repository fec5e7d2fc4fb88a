// A dummy compute kernel for the overlap test: spins for a given number of clock cycles.
#include <cuda_runtime.h>

#include "spin_kernel.hpp"

namespace {
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
}  // namespace

void stoker_spin(long long cycles, void* stream) {
  spin<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(cycles);
}
