// The device feeder's ordering rules, without a GPU: FeederCore on the simulated engine
// (sim_engine.hpp), whose copies complete late and read their source when they complete, as
// DMA does. Each Faults test is a bug a read of the feeder against CUDA's semantics found;
// each failed on the feeder before its fix. The same cases on a real GPU are in
// tests/gpu/gpu_feeder_order_test.cpp.
#include <gtest/gtest.h>

#include "feeder_sim.hpp"
#include "stoker/cuda/cuda_device.hpp"

namespace stoker {
namespace {

using std::chrono::microseconds;
using test::FeederSim;

// Copies slower than the host: the consumer's loop (no host wait) runs ahead of them, as a
// training loop does when its kernels are queued asynchronously.
constexpr microseconds kKernel{6000};
// Longer than a copy into the buffer takes: a copy not ordered after it lands mid-read.
constexpr microseconds kLongKernel{20000};

// wait_on(s), a kernel, release(s), no host wait: a host slot must not go back to the loader
// (whose workers refill it) while the copy from it is still in flight.
TEST(FaultsFeederOrder, AHostSlotIsNotRefilledWhileItsCopyReadsIt) {
  FeederSim sim(24);
  EXPECT_EQ(sim.epoch(kKernel, true), 24u);
  sim.expect_archive_intact();
  EXPECT_EQ(sim.engine->faults(), std::vector<std::string>{});
}

// release() without a stream, after wait_on(s): the next copy into the buffer must wait for
// the kernels queued on s, not for the legacy default stream, which a non-blocking stream
// is not ordered with.
TEST(FaultsFeederOrder, ReleaseWithoutAStreamWaitsForTheStreamTheBatchWasReadOn) {
  FeederSim sim(16);
  EXPECT_EQ(sim.epoch(kLongKernel, false), 16u);
  sim.expect_archive_intact();
}

// release() without a stream and without wait_on(): the feeder cannot know where the batch
// was read, so the buffer is reused only after the device's queued work.
TEST(FaultsFeederOrder, ReleaseWithoutAnyStreamWaitsForTheDevice) {
  FeederSim sim(12);
  sim.loader->start_epoch();
  while (std::optional<HandedBatch> h = sim.core->next(*sim.loader)) {
    sim.core->synchronize(h->buffer);  // the copy is done; the kernel reads on `consumer`
    const size_t bytes = h->size * h->spec->bytes();
    sim.engine->launch(sim.consumer, kLongKernel, [&sim, h = *h, bytes] {
      std::vector<std::byte> read = sim.engine->read(h.data, bytes);
      std::lock_guard lock(sim.mu);
      sim.archive[h.number] = std::move(read);
    });
    sim.core->release(h->buffer, nullptr);
  }
  sim.engine->synchronize_device();
  sim.expect_archive_intact();
}

// The feeder object and the last batch dropped while the consumer's kernels still read the
// buffers: the core must free them only after those kernels (their release points), not
// after its own copy stream alone. cudaFree's own wait for the device would hide the fault,
// so the engine frees at once here (as cudaFreeAsync would): the rule is the core's.
TEST(FaultsFeederOrder, DeviceBuffersOutliveTheKernelsThatReadThem) {
  FeederSim sim(8);
  sim.engine->set_free_waits(false);
  sim.loader->start_epoch();
  for (int k = 0; k < 2; ++k) {
    std::optional<HandedBatch> h = sim.core->next(*sim.loader);
    ASSERT_TRUE(h.has_value());
    sim.step(*h, microseconds(30000));
    sim.core->release(h->buffer, sim.consumer);
  }
  sim.core->drain();
  sim.core.reset();  // the last owner goes: buffers freed
  sim.engine->synchronize_device();
  EXPECT_EQ(sim.engine->faults(), std::vector<std::string>{});
  EXPECT_EQ(sim.engine->live_blocks(), 0u) << "every device buffer freed";
  std::lock_guard lock(sim.mu);
  EXPECT_EQ(sim.archive.size(), 2u);
}

// The first allocation fails (no room on the GPU); the caller frees memory and asks again:
// the retry must allocate, not copy into buffers that were never made, and lose no batch.
TEST(FaultsFeederOrder, ARetryAfterAFailedAllocationAllocatesAndLosesNoBatch) {
  FeederSim sim(10);
  sim.engine->set_free_bytes(4096);  // less than two buffers of 8 x 512 bytes + labels
  sim.loader->start_epoch();
  try {
    sim.core->next(*sim.loader);
    FAIL() << "no error without room for the buffers";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no room for 2 device buffers"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(sim.engine->live_blocks(), 0u) << "nothing kept of a failed allocation";
  sim.engine->set_free_bytes(size_t{1} << 30);
  uint64_t n = 0;
  while (std::optional<HandedBatch> h = sim.core->next(*sim.loader)) {
    sim.step(*h, microseconds(500));
    sim.core->release(h->buffer, sim.consumer);
    ++n;
  }
  sim.engine->synchronize_device();
  EXPECT_EQ(n, 10u);
  sim.expect_archive_intact();
}

// A consumer that keeps every buffer and asks for one more gets the error that says so,
// at once, even while copies are in flight (not a wait for a buffer that cannot come).
TEST(FeederOrder, AConsumerHoldingEveryBufferIsToldSo) {
  FeederSim sim(8);
  sim.loader->start_epoch();
  std::vector<HandedBatch> held;
  for (int k = 0; k < FeederSim::kDepth; ++k) held.push_back(*sim.core->next(*sim.loader));
  try {
    sim.core->next(*sim.loader);
    FAIL() << "a third batch from two buffers, both held";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the consumer holds all 2 device buffers"),
              std::string::npos)
        << e.what();
  }
  for (const HandedBatch& h : held) sim.core->release(h.buffer, sim.consumer);
}

// The copies are timed from the engine's events, and the simulated GPU is never CUDA's.
TEST(FeederOrder, CountsBatchesBytesAndCopyTimeWithoutCallingCuda) {
  FeederSim sim(6);
  EXPECT_EQ(sim.epoch(microseconds(100), true), 6u);
  const FeederStats s = sim.core->stats();
  EXPECT_EQ(s.batches, 6u);
  EXPECT_EQ(s.bytes, 6u * FeederSim::kBatch * (512 + 8));
  EXPECT_EQ(s.timed_bytes, s.bytes);
  EXPECT_GE(s.h2d_ns, 6u * 2 * 3'000'000) << "two 3 ms copies a batch";
  EXPECT_EQ(cuda_calls(), 0u);
}

}  // namespace
}  // namespace stoker
