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

double stoker_spin_ms(long long cycles, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  stoker_spin(cycles, s);  // warm-up (module load)
  cudaEventRecord(a, s);
  stoker_spin(cycles, s);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

long long stoker_spin_cycles_for(double ms, void* stream) {
  const long long probe = 1000000;
  return static_cast<long long>(probe * ms / stoker_spin_ms(probe, stream));
}
