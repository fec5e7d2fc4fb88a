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

// The thread's last-error slot (cudaGetLastError) is the application's too: torch's launch
// checks raise whatever they find there. Stoker clears what its own failed or "not ready"
// calls leave in it, so that its answers do not fail the application's next check, but only
// when the slot held no error as stoker was entered: an error the application has not read
// yet (a failed launch) must reach it, not be swallowed by a feeder query in between.
// (A sticky error, a broken context, cannot be cleared by anyone.)
//
// Each entry point of stoker into the runtime holds a scope (DeviceScope does); the
// outermost one on a thread looks at the slot when it begins.
class ErrorSlotScope {
 public:
  ErrorSlotScope();
  ~ErrorSlotScope();
  ErrorSlotScope(const ErrorSlotScope&) = delete;
  ErrorSlotScope& operator=(const ErrorSlotScope&) = delete;
};

// Clears the slot after a call of stoker's that failed or was not ready, unless it held the
// application's error when the outermost scope began (outside any scope: always).
void clear_own_error();

// The runtime's two calls on the slot (cudaPeekAtLastError, cudaGetLastError); the unit
// tests put a simulated slot, with sticky errors, in their place.
struct ErrorSlotCalls {
  cudaError_t (*peek)();
  cudaError_t (*get)();
};
ErrorSlotCalls& error_slot_calls();

// Throws stoker::Error(where, describe(call, result), todo) unless result is cudaSuccess.
// Clears the error from the last-error slot first (clear_own_error), so one failure does not
// leak into the next unrelated check.
void check(cudaError_t result, const char* call, const std::string& where,
           const std::string& todo = {});

}  // namespace stoker::cuda
