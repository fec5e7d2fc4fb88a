// Every CUDA runtime call stoker makes goes through counted(): it is what lets the tests
// prove that a process without a GPU in its plan makes no CUDA call at all.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace stoker::cuda {

// Counts one call and returns its result unchanged: counted(cudaFoo(...)).
cudaError_t counted(cudaError_t result);

// "cudaMemcpyAsync: invalid argument (cudaErrorInvalidValue)"
std::string describe(const char* call, cudaError_t result);

// Throws stoker::Error(where, describe(call, result), todo) unless result is cudaSuccess.
// Clears the runtime's sticky "last error" first, so one failure does not leak into the
// next unrelated check.
void check(cudaError_t result, const char* call, const std::string& where,
           const std::string& todo = {});

}  // namespace stoker::cuda
