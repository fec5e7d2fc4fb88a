// Helpers for the GPU tests: find a GPU (or skip with the reason), a plan naming it, a
// token loader whose batches can be checked, and a small CUDA error check.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "loader/loader_fixture.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_feeder.hpp"
#include "stoker/cuda/cuda_pinner.hpp"

namespace stoker::test {

#define STOKER_CUDA_OK(expr)                                               \
  do {                                                                     \
    cudaError_t e_ = (expr);                                               \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

// PCI bus id of CUDA device 0, or "" with `why` set when this machine has no usable GPU.
inline std::string first_gpu(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    *why = e != cudaSuccess ? std::string("no usable GPU: ") + cudaGetErrorString(e)
                            : "no usable GPU: CUDA sees no device";
    cudaGetLastError();
    return "";
  }
  char id[32] = {};
  cudaDeviceGetPCIBusId(id, sizeof id, 0);
  return id;
}

#define STOKER_GPU_OR_SKIP(bus_id)             \
  std::string bus_id;                          \
  {                                            \
    std::string why_;                          \
    bus_id = ::stoker::test::first_gpu(&why_); \
    if (bus_id.empty()) GTEST_SKIP() << why_;  \
  }

// A plan for this process that feeds GPU `bus_id` from pinned memory.
inline Plan gpu_test_plan(const std::string& bus_id, int prefetch, uint64_t budget) {
  Plan p = test_plan(std::max(1, current_cpu_mask().count() - 1), prefetch, budget);
  p.gpu = bus_id;
  p.pin_memory = true;
  return p;
}

// Loader options over a token file for the feeder tests.
inline LoaderOptions gpu_loader_options(const Plan& plan, size_t batch, int held) {
  LoaderOptions o;
  o.batch_size = batch;
  o.world_size = 1;
  o.rank = 0;
  o.seed = 7;
  o.plan = plan;
  o.pinner = make_host_pinner(plan);
  o.held_batches = held;
  return o;
}

// The set-up the feeder's GPU tests share: a token file of `windows` windows of `seq`
// tokens, a loader over it in batches of `batch` (gpu_loader_options on a plan of
// `prefetch` and `budget`, then `adjust`), and its device feeder on GPU `bus_id`.
struct GpuTokenFeed {
  GpuTokenFeed(const std::string& bus_id, uint64_t seq, uint64_t windows, size_t batch,
               int prefetch = 4, uint64_t budget = 256ull << 20,
               const std::function<void(LoaderOptions&)>& adjust = {})
      : source(std::make_shared<TokenFileSource>(write_tokens(dir, windows * seq + 1), seq)),
        loader(source, std::make_shared<CopyTransform>(source->spec()),
               options(bus_id, batch, prefetch, budget, adjust)),
        feeder(loader),
        stream_made(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) {}
  ~GpuTokenFeed() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  TempDir dir;
  std::shared_ptr<TokenFileSource> source;
  Loader loader;
  DeviceFeeder feeder;
  // The test's consumer stream, non-blocking as torch's side streams are (check stream_made).
  cudaStream_t stream = nullptr;
  cudaError_t stream_made;

 private:
  static LoaderOptions options(const std::string& bus_id, size_t batch, int prefetch,
                               uint64_t budget, const std::function<void(LoaderOptions&)>& adjust) {
    LoaderOptions o = gpu_loader_options(gpu_test_plan(bus_id, prefetch, budget), batch,
                                         DeviceFeeder::kDefaultDepth + 1);
    if (adjust) adjust(o);
    return o;
  }
};

}  // namespace stoker::test
