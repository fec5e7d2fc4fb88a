// The CUDA path on a machine without a GPU: no CUDA call unless the plan names a GPU,
// one lazy probe when it does (its failure meaning "no GPU"), and the host path intact.
// ctest runs every test in its own process, so cuda_calls() starts at 0 in each.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpu_probe.hpp"
#include "stoker/common/error.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_pinner.hpp"
#include "stoker/loader/loader.hpp"
#if STOKER_HAVE_CUDA
#include "stoker/cuda/cuda_feeder.hpp"
#endif

namespace stoker {
namespace {

using test::gpu_plan;
using test::kSomeBusId;
using test::machine_has_gpu;

// Runs one epoch of a small token loader; returns its stats.
LoaderStats run_token_epoch(const Plan& plan, std::shared_ptr<HostPinner> pinner) {
  test::TempDir dir;
  auto src = std::make_shared<TokenFileSource>(test::write_tokens(dir, 64 * 33 + 1), 32);
  LoaderOptions o = test::test_options(8, 1);
  o.plan = plan;
  o.pinner = std::move(pinner);
  Loader loader(src, std::make_shared<CopyTransform>(src->spec()), o);
  uint64_t batches = 0;
  for (Batch& b : loader) {
    test::expect_windows(b, 32);
    ++batches;
  }
  EXPECT_EQ(batches, loader.batches_per_epoch());
  return loader.stats();
}

TEST(PlanGpu, PlanWithoutGpuMakesNoCudaCall) {
  Plan p = test::test_plan(1);
  GpuAvailability g = plan_gpu(p);
  EXPECT_FALSE(g.usable);
  EXPECT_EQ(g.device, -1);
  EXPECT_EQ(g.why, "the plan names no GPU");
  EXPECT_EQ(cuda_calls(), 0u);
}

TEST(HostPinner, NoPinnerWhenThePlanDoesNotPin) {
  Plan p = gpu_plan(kSomeBusId);
  p.pin_memory = false;
  EXPECT_EQ(make_host_pinner(p), nullptr);
  EXPECT_EQ(cuda_calls(), 0u);
}

// The loader keeps working on pageable memory when the pinner refuses, and says why.
TEST(HostPinner, LoaderRunsOnHostMemoryWithoutGpu) {
  Plan p = test::test_plan(1);
  p.pin_memory = true;  // asked for, but there is no GPU in the plan
  std::shared_ptr<HostPinner> pinner = make_host_pinner(p);
  LoaderStats s = run_token_epoch(p, pinner);
  EXPECT_FALSE(s.pinned);
  if (kBuiltWithCuda) {
    ASSERT_NE(pinner, nullptr);
    bool noted = false;
    for (const std::string& n : s.notes) noted |= n.find("the plan names no GPU") != n.npos;
    EXPECT_TRUE(noted) << s.summary();
  }
  EXPECT_EQ(cuda_calls(), 0u);
}

#if STOKER_HAVE_CUDA

TEST(PlanGpu, ProbesOnceAndTreatsFailureAsNoGpu) {
  if (machine_has_gpu()) GTEST_SKIP() << "a GPU is visible; tests/gpu covers this machine";
  const uint64_t after_probe = cuda_calls();
  EXPECT_GE(after_probe, 1u);
  GpuAvailability g = plan_gpu(gpu_plan(kSomeBusId));
  EXPECT_FALSE(g.usable);
  EXPECT_NE(g.why.find("no usable GPU"), std::string::npos) << g.why;
  EXPECT_EQ(cuda_calls(), after_probe) << "the runtime must be probed once per process";
}

TEST(HostPinner, RefusesWithTheReasonWhenNoGpuIsUsable) {
  if (machine_has_gpu()) GTEST_SKIP() << "a GPU is visible; tests/gpu covers pinning";
  CudaHostPinner pinner(gpu_plan(kSomeBusId));
  std::vector<std::byte> mem(1 << 16);
  std::string why;
  EXPECT_FALSE(pinner.pin(mem.data(), mem.size(), &why));
  EXPECT_NE(why.find("not page-locked: no usable GPU"), std::string::npos) << why;
  pinner.unpin(mem.data(), mem.size());  // a no-op after a refusal
  EXPECT_EQ(pinner.describe(), std::string("cudaHostRegister (GPU ") + kSomeBusId + ")");
}

TEST(HostPinner, LoaderWithGpuPlanFallsBackToHostMemory) {
  if (machine_has_gpu()) GTEST_SKIP() << "a GPU is visible; tests/gpu covers pinning";
  Plan p = gpu_plan(kSomeBusId);
  LoaderStats s = run_token_epoch(p, make_host_pinner(p));
  EXPECT_FALSE(s.pinned);
}

TEST(DeviceFeeder, RefusesAPlanWithoutGpuWithoutCallingCuda) {
  test::TempDir dir;
  auto src = std::make_shared<TokenFileSource>(test::write_tokens(dir, 1025), 32);
  Loader loader(src, std::make_shared<CopyTransform>(src->spec()), test::test_options(4, 1));
  try {
    DeviceFeeder feeder(loader);
    FAIL() << "a feeder was made for a plan without GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "plan");
    EXPECT_NE(e.problem().find("names no GPU"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cuda_calls(), 0u);
}

TEST(DeviceFeeder, RefusesWhenThePlansGpuIsNotUsable) {
  if (machine_has_gpu()) GTEST_SKIP() << "a GPU is visible; tests/gpu covers the feeder";
  test::TempDir dir;
  auto src = std::make_shared<TokenFileSource>(test::write_tokens(dir, 1025), 32);
  LoaderOptions o = test::test_options(4, 1);
  o.plan = gpu_plan(kSomeBusId);
  Loader loader(src, std::make_shared<CopyTransform>(src->spec()), o);
  try {
    DeviceFeeder feeder(loader);
    FAIL() << "a feeder was made without a usable GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), std::string("STOKER_GPU=") + kSomeBusId);
    EXPECT_NE(e.problem().find("no usable GPU"), std::string::npos) << e.what();
  }
}

#else

TEST(PlanGpu, BuildWithoutCudaSaysSo) {
  EXPECT_EQ(plan_gpu(gpu_plan(kSomeBusId)).why, "stoker was built without CUDA");
  EXPECT_EQ(make_host_pinner(gpu_plan(kSomeBusId)), nullptr);
}

#endif

}  // namespace
}  // namespace stoker
