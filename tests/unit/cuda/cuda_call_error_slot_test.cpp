// The rule for the thread's last-error slot (cuda_call.hpp), on a simulated slot: stoker
// clears what its own calls leave there, never an error the application has not read yet,
// and a sticky error stays whatever anyone does. The runtime's own slot cannot be driven on
// a machine without a GPU (without a driver every call returns one sticky error); the GPU
// test gpu.FaultsFeeder.AnApplicationsPendingErrorSurvivesTheFeedersQueries drives it.
#include <gtest/gtest.h>

#if STOKER_HAVE_CUDA
#include "cuda/cuda_call.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

// One thread's slot, as the runtime keeps it: a failing call leaves its error there,
// cudaGetLastError reads and resets it, cudaPeekAtLastError only reads it; once a sticky
// error happened, every call returns it and nothing resets it.
struct SimSlot {
  static inline cudaError_t error = cudaSuccess;
  static inline bool sticky = false;
  static cudaError_t peek() { return error; }
  static cudaError_t get() {
    const cudaError_t e = error;
    if (!sticky) error = cudaSuccess;
    return e;
  }
  static cudaError_t call(cudaError_t result) {  // a runtime call that returns `result`
    if (sticky) return error;
    if (result != cudaSuccess) error = result;
    return result;
  }
};

class FaultsErrorSlot : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = cuda::error_slot_calls();
    cuda::error_slot_calls() = {SimSlot::peek, SimSlot::get};
    SimSlot::error = cudaSuccess;
    SimSlot::sticky = false;
  }
  void TearDown() override { cuda::error_slot_calls() = saved_; }
  // A query of stoker's, as CopyEngine::done() makes it: "not ready" is cleared.
  static void stokers_query() {
    cuda::ErrorSlotScope scope;
    if (SimSlot::call(cudaErrorNotReady) == cudaErrorNotReady) cuda::clear_own_error();
  }
  // A call of stoker's that fails and throws (check()).
  static void stokers_failing_call() {
    cuda::ErrorSlotScope scope;
    EXPECT_THROW(cuda::check(SimSlot::call(cudaErrorInvalidValue), "cudaFoo", "GPU x"), Error);
  }
  cuda::ErrorSlotCalls saved_{};
};

using ErrorSlot = FaultsErrorSlot;  // the same slot, for what held before the fix too

TEST_F(ErrorSlot, StokersOwnNotReadyAndFailureLeaveACleanSlotClean) {
  stokers_query();
  EXPECT_EQ(SimSlot::peek(), cudaSuccess);
  stokers_failing_call();
  EXPECT_EQ(SimSlot::peek(), cudaSuccess);
}

TEST_F(FaultsErrorSlot, AnApplicationsPendingErrorIsNotSwallowed) {
  SimSlot::call(cudaErrorInvalidConfiguration);  // the application's failed launch
  stokers_query();
  EXPECT_NE(SimSlot::peek(), cudaSuccess) << "a query of stoker's cleared it";
  stokers_failing_call();
  EXPECT_NE(SimSlot::get(), cudaSuccess) << "a failure of stoker's cleared it";
  EXPECT_EQ(SimSlot::peek(), cudaSuccess) << "read by the application: the slot is clean";
  stokers_query();  // and stoker clears its own again
  EXPECT_EQ(SimSlot::peek(), cudaSuccess);
}

// The outermost scope decides: calls nested in it (DeviceFeeder::next around the engine's
// calls, each with its own DeviceScope) keep the application's error too.
TEST_F(FaultsErrorSlot, NestedScopesFollowTheOutermost) {
  SimSlot::call(cudaErrorInvalidConfiguration);
  {
    cuda::ErrorSlotScope outer;
    stokers_query();
    stokers_failing_call();
  }
  EXPECT_NE(SimSlot::get(), cudaSuccess) << "the application's error was swallowed";
  {
    cuda::ErrorSlotScope outer;
    stokers_query();
  }
  EXPECT_EQ(SimSlot::peek(), cudaSuccess);
}

TEST_F(ErrorSlot, AStickyErrorStaysAndStillFailsStokersCalls) {
  SimSlot::call(cudaErrorIllegalAddress);
  SimSlot::sticky = true;
  stokers_failing_call();
  EXPECT_EQ(SimSlot::peek(), cudaErrorIllegalAddress);
  cuda::clear_own_error();  // outside any scope: reads it, cannot reset it
  EXPECT_EQ(SimSlot::peek(), cudaErrorIllegalAddress);
}

}  // namespace
}  // namespace stoker
#endif  // STOKER_HAVE_CUDA
