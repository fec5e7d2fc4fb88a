// The device feeder on a real GPU: the data arrives intact, the copies run at the speed of
// a plain pinned cudaMemcpyAsync, and a plan naming an absent GPU is a clear error.
#include <chrono>
#include <cstdio>
#include <vector>

#include "gpu_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {
namespace {

TEST(Feeder, DeliversEveryBatchIntactOnTheDevice) {
  STOKER_GPU_OR_SKIP(bus);
  const uint64_t seq = 255;
  test::GpuTokenFeed feed(bus, seq, 200, 16);
  Loader& loader = feed.loader;
  DeviceFeeder& feeder = feed.feeder;
  EXPECT_TRUE(feeder.stats().host_pinned) << loader.stats().summary();
  std::vector<uint16_t> host;
  std::vector<int64_t> labels;
  uint64_t batches = 0;
  loader.start_epoch();
  while (auto b = feeder.next()) {
    b->synchronize();
    host.resize(b->bytes() / 2);
    labels.resize(b->size());
    STOKER_CUDA_OK(cudaMemcpy(host.data(), b->data(), b->bytes(), cudaMemcpyDeviceToHost));
    STOKER_CUDA_OK(cudaMemcpy(labels.data(), b->labels(), b->size() * 8, cudaMemcpyDeviceToHost));
    // The sampler's order is the loader's: batch k holds the windows the loader chose.
    EXPECT_EQ(b->number(), batches);
    for (size_t k = 0; k < b->size(); ++k) EXPECT_EQ(labels[k], 0);
    // Each window is consecutive tokens t, t+1, ... (mod the prime of the fixture).
    for (size_t k = 0; k < b->size(); ++k) {
      const uint16_t first = host[k * (seq + 1)];
      for (uint64_t j = 1; j <= seq; j += 37) {
        ASSERT_EQ(host[k * (seq + 1) + j], (first + j) % 65521) << "batch " << batches;
      }
    }
    b->release();
    ++batches;
  }
  EXPECT_EQ(batches, loader.batches_per_epoch());
  EXPECT_EQ(feeder.stats().batches, batches);
}

// Bytes per second of `count` plain cudaMemcpyAsync of `bytes` from cudaHostAlloc memory.
double plain_pinned_gbps(size_t bytes, int count) {
  void* host = nullptr;
  void* dev = nullptr;
  cudaStream_t s;
  cudaEvent_t a, b;
  cudaHostAlloc(&host, bytes, cudaHostAllocPortable);
  cudaMalloc(&dev, bytes);
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::memset(host, 1, bytes);
  cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s);  // warm-up
  cudaEventRecord(a, s);
  for (int i = 0; i < count; ++i) cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s);
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
  cudaFree(dev);
  cudaFreeHost(host);
  return static_cast<double>(bytes) * count / (ms * 1e6);
}

TEST(Feeder, BandwidthIsAtLeast90PercentOfAPlainPinnedCopy) {
  STOKER_GPU_OR_SKIP(bus);
  // 8 MiB batches: 256 windows of 16383 uint16 tokens (+1 shared).
  const uint64_t seq = 16383, batch = 256, batches = 24;
  test::GpuTokenFeed feed(bus, seq, batches * batch, batch, 4, 1ull << 30);
  Loader& loader = feed.loader;
  DeviceFeeder& feeder = feed.feeder;
  ASSERT_TRUE(feeder.stats().host_pinned) << loader.stats().summary();
  loader.start_epoch();
  while (auto b = feeder.next()) b->release();
  const FeederStats s = feeder.stats();
  ASSERT_GT(s.timed_bytes, 0u);
  const double feeder_gbps = s.h2d_gb_per_s();
  const size_t batch_bytes = batch * (seq + 1) * 2;
  const double plain_gbps = plain_pinned_gbps(batch_bytes, static_cast<int>(batches));
  std::printf(
      "[ figures  ] H2D of %zu-byte batches: feeder %.2f GB/s, plain pinned "
      "cudaMemcpyAsync %.2f GB/s (%.1f %%)\n",
      batch_bytes, feeder_gbps, plain_gbps, 100 * feeder_gbps / plain_gbps);
  EXPECT_GE(feeder_gbps, 0.9 * plain_gbps);
}

TEST(Feeder, PlanNamingAGpuNotVisibleIsAClearError) {
  STOKER_GPU_OR_SKIP(bus);
  Plan plan = test::gpu_test_plan("0000:ff:1f.7", 2, 64 << 20);
  try {
    plan_gpu(plan);
    FAIL() << "no error for a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "STOKER_GPU=0000:ff:1f.7");
    EXPECT_NE(e.problem().find("not visible"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find(bus.substr(0, 7)), std::string::npos)
        << "the visible GPUs are listed: " << e.what();
  }
}

}  // namespace
}  // namespace stoker
