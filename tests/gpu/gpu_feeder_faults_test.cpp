// Faults of the device path that a read of the code found (need a GPU; skip without one):
// a DeviceBatch dropped without release(stream) while a kernel on the consumer's
// non-blocking stream still reads it, the application's pending error cleared by the
// feeder, and pinning that changed the caller's device.
#include <optional>
#include <vector>

#include "gpu_fixture.hpp"
#include "spin_kernel.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {
namespace {

// The consumer reads batch 0 on its own non-blocking stream behind a long kernel, then
// drops the batch without release(). The feeder's next copies must not overwrite the
// buffer before that read: the bytes read equal the batch's.
TEST(FaultsFeeder, ADroppedBatchIsNotOverwrittenWhileItsStreamStillReadsIt) {
  STOKER_GPU_OR_SKIP(bus);
  test::GpuTokenFeed feed(bus, 255, 64, 8);
  DeviceFeeder& feeder = feed.feeder;
  STOKER_CUDA_OK(feed.stream_made);
  cudaStream_t s = feed.stream;
  feed.loader.start_epoch();
  std::vector<uint16_t> expected;
  uint16_t* read = nullptr;  // pinned: a copy to pageable memory would block the host
  size_t bytes = 0;
  {
    auto b = feeder.next();
    ASSERT_TRUE(b.has_value());
    b->synchronize();
    bytes = b->bytes();
    expected.resize(bytes / 2);
    STOKER_CUDA_OK(cudaMallocHost(reinterpret_cast<void**>(&read), bytes));
    STOKER_CUDA_OK(cudaMemcpy(expected.data(), b->data(), bytes, cudaMemcpyDeviceToHost));
    b->wait_on(s);
    stoker_spin(200'000'000, s);  // ~0.1 s of GPU time before the read below
    STOKER_CUDA_OK(cudaMemcpyAsync(read, b->data(), bytes, cudaMemcpyDeviceToHost, s));
  }                                                                    // dropped without release()
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(feeder.next().has_value());  // reuses its buffer
  STOKER_CUDA_OK(cudaStreamSynchronize(s));
  EXPECT_EQ(std::vector<uint16_t>(read, read + bytes / 2), expected);
  cudaFreeHost(read);
}

// An error the application has not read yet (a failed call, as a failed torch launch
// leaves one) must still be in the thread's last-error slot after the feeder's calls: the
// feeder's "not ready" queries used to clear the slot whatever it held. A
// spin on the feeder's copy stream keeps each next() finding a copy not done yet.
TEST(FaultsFeeder, AnApplicationsPendingErrorSurvivesTheFeedersQueries) {
  STOKER_GPU_OR_SKIP(bus);
  test::GpuTokenFeed feed(bus, 255, 64, 8);
  DeviceFeeder& feeder = feed.feeder;
  STOKER_CUDA_OK(feed.stream_made);
  cudaStream_t s = feed.stream;
  feed.loader.start_epoch();
  int batches = 0;
  for (;;) {
    ASSERT_NE(cudaSetDevice(-1), cudaSuccess);  // the application's error, not read yet
    std::optional<DeviceBatch> b = feeder.next();
    EXPECT_NE(cudaGetLastError(), cudaSuccess) << "batch " << batches << ": swallowed";
    if (!b) break;
    b->wait_on(s);
    b->release(s);
    stoker_spin(20'000'000, b->stream());  // ~10 ms: the next copies are not done
    ++batches;
  }
  EXPECT_GE(batches, 4) << "a few next() calls with copies in flight";
  STOKER_CUDA_OK(cudaStreamSynchronize(s));
}

// Pinning for the plan's GPU leaves the application's current device as it was.
TEST(FaultsFeeder, PinningKeepsTheCallersCurrentDevice) {
  STOKER_GPU_OR_SKIP(bus);
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 2) GTEST_SKIP() << "needs two GPUs: the plan's and another current one";
  STOKER_CUDA_OK(cudaSetDevice(1));
  Plan plan = test::gpu_test_plan(bus, 2, 64ull << 20);  // bus: device 0
  auto pinner = make_host_pinner(plan);
  std::vector<std::byte> memory(1 << 20);
  std::string why;
  ASSERT_TRUE(pinner->pin(memory.data(), memory.size(), &why)) << why;
  int now = -1;
  STOKER_CUDA_OK(cudaGetDevice(&now));
  EXPECT_EQ(now, 1);
  pinner->unpin(memory.data(), memory.size());
  cudaSetDevice(0);
}

}  // namespace
}  // namespace stoker
