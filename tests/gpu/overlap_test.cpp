// Copies overlap compute: while the consumer's kernel runs on batch k, the feeder's copy of
// batch k+1 proceeds on its own stream.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "gpu_fixture.hpp"
#include "spin_kernel.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {
namespace {

TEST(Feeder, CopiesOverlapCompute) {
  STOKER_GPU_OR_SKIP(bus);
  const uint64_t seq = 16383, batch = 256;  // 8 MiB per batch
  const int n = 16;
  // A ring deep enough for the whole epoch, filled before timing: the test measures the
  // feeder's copies against compute, not the host's reading.
  test::GpuTokenFeed feed(bus, seq, n * batch, batch, n, 2ull << 30, [&](LoaderOptions& lo) {
    lo.adaptive = false;
    lo.max_depth = n;
  });
  Loader& loader = feed.loader;
  DeviceFeeder& feeder = feed.feeder;
  STOKER_CUDA_OK(feed.stream_made);
  cudaStream_t s = feed.stream;

  // One kernel about as long as one batch's copy (from the plain copy rate).
  const double copy_ms = 8.0 / 1024 / 25.0 * 1000;  // first guess: 25 GB/s
  long long cycles = 100000;
  const double per = stoker_spin_ms(cycles, s);
  cycles = static_cast<long long>(cycles * (copy_ms / per));
  const double kernel_ms = stoker_spin_ms(cycles, s);

  loader.start_epoch();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the ring fills
  // Warm-up, untimed: the first next() allocates the device buffers and makes the process's
  // first copies (the driver maps the pinned slots, the DMA engine starts), which the steps
  // after it do not pay.
  {
    auto first = feeder.next();
    ASSERT_TRUE(first.has_value());
    first->wait_on(s);
    stoker_spin(cycles, s);
    first->release(s);
  }
  STOKER_CUDA_OK(cudaStreamSynchronize(s));
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  cudaEventRecord(start, s);
  int steps = 0;
  while (auto b = feeder.next()) {
    b->wait_on(s);
    stoker_spin(cycles, s);
    b->release(s);
    ++steps;
  }
  cudaEventRecord(end, s);
  STOKER_CUDA_OK(cudaEventSynchronize(end));
  float wall_ms = 0;
  cudaEventElapsedTime(&wall_ms, start, end);
  const FeederStats st = feeder.stats();
  // Every copy is timed: the mean copy of one batch, for the timed steps.
  const double copy_each_ms = st.h2d_ns / 1e6 / std::max<uint64_t>(1, st.batches);
  const double copies_ms = copy_each_ms * steps;
  const double serial_ms = copies_ms + steps * kernel_ms;
  std::printf(
      "[ figures  ] %d steps after a warm-up: kernels %.2f ms each, copies %.2f ms each; "
      "wall %.2f ms vs %.2f ms if serial (%.0f %%)\n",
      steps, kernel_ms, copy_each_ms, wall_ms, serial_ms, 100 * wall_ms / serial_ms);
  ASSERT_EQ(steps + 1, n);
  // Overlapped, the wall is about max(copies, kernels) plus one copy; serial is their sum.
  EXPECT_LT(wall_ms, 0.8 * serial_ms);
  cudaEventDestroy(start);
  cudaEventDestroy(end);
}

}  // namespace
}  // namespace stoker
