// The device feeder's core on the simulated engine (sim_engine.hpp), for what a second read
// of the feeder against CUDA's rules found. Each Faults test failed on the feeder
// before its fix.
#include <gtest/gtest.h>

#include "feeder_sim.hpp"

namespace stoker {
namespace {

using std::chrono::microseconds;
using test::FeederSim;
using test::SimEngine;

// Longer than a copy into the buffer takes: a copy not ordered after it lands mid-read.
constexpr microseconds kLongKernel{20000};

// Each batch is read by a long kernel on the consumer's stream and a short one on a side
// stream (a second compute or copy stream), then released without a stream or on the side
// stream. The next copy into its buffer must wait for both streams: it used to wait for the
// last stream given to wait_on() (or the release's) only, and overwrote the buffer while the
// long kernel still read it.
void read_on_two_streams(bool release_on_side) {
  FeederSim sim(12);
  CopyEngine::Stream side = sim.engine->create_stream();
  sim.loader->start_epoch();
  uint64_t n = 0;
  while (std::optional<HandedBatch> h = sim.core->next(*sim.loader)) {
    sim.step(*h, kLongKernel);  // wait_on(consumer), a kernel that archives what it read
    sim.core->wait_on(h->buffer, side);
    sim.engine->launch(side, microseconds(500), nullptr);
    sim.core->release(h->buffer, release_on_side ? side : nullptr);
    ++n;
  }
  sim.engine->synchronize_device();
  EXPECT_EQ(n, 12u);
  sim.expect_archive_intact();
  EXPECT_EQ(sim.engine->faults(), std::vector<std::string>{});
}

TEST(FaultsFeederOrder, ABatchReadOnTwoStreamsAndDroppedWaitsForBoth) {
  read_on_two_streams(false);
}

TEST(FaultsFeederOrder, ABatchReleasedOnOneOfTwoStreamsItWasReadOnWaitsForBoth) {
  read_on_two_streams(true);
}

// A wait across GPUs is valid CUDA, but the release point would then be recorded on that
// stream, which fails: the buffer was lost. wait_on() now refuses it, names the cause, and the
// batch is released as usual afterwards; the epoch loses nothing.
TEST(FaultsFeederRelease, WaitOnAStreamOfAnotherGpuIsRefused) {
  FeederSim sim(4);
  CopyEngine::Stream other = sim.engine->create_stream_on(1);
  sim.loader->start_epoch();
  std::optional<HandedBatch> h = sim.core->next(*sim.loader);
  ASSERT_TRUE(h.has_value());
  try {
    sim.core->wait_on(h->buffer, other);
    FAIL() << "wait_on() took a stream of another GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a stream of another GPU"), std::string::npos) << e.what();
  }
  sim.step(*h, microseconds(500));
  sim.core->release(h->buffer, sim.consumer);
  uint64_t n = 1;
  while (std::optional<HandedBatch> next = sim.core->next(*sim.loader)) {
    sim.step(*next, microseconds(500));
    sim.core->release(next->buffer, sim.consumer);
    ++n;
  }
  sim.engine->synchronize_device();
  EXPECT_EQ(n, 4u);
  sim.expect_archive_intact();
}

// A constructor that throws runs no destructor: the stream and the events created before the
// failing one leaked, on every retry.
TEST(FaultsFeederCore, AConstructorThatFailsLeavesNoStreamOrEvent) {
  auto engine = std::make_shared<SimEngine>(microseconds(100));
  const SampleSpec spec{DType::U16, {256}};
  const size_t before = engine->live_handles();
  for (int after : {0, 1, 3, 5}) {  // 2 buffers x 3 events with timing: each may fail
    engine->fail_create_event_after(after);
    EXPECT_THROW(FeederCore(engine, FeederSim::identity(), true, spec), Error);
    EXPECT_EQ(engine->live_handles(), before) << "after " << after << " events were made";
  }
  engine->fail_create_event_after(-1);
  { FeederCore core(engine, FeederSim::identity(), true, spec); }
  EXPECT_EQ(engine->live_handles(), before) << "a feeder core destroys what it made";
}

// The copies completed, but their times cannot be read (cudaEventElapsedTime failing): each
// host slot must still go back to the loader and the epoch end with every batch intact. The
// time was read before the slot was given back, so the error left the slot held and every
// later next() threw it again.
TEST(FaultsFeederCore, ACopyWhoseTimeCannotBeReadStillGivesItsSlotBack) {
  FeederSim sim(10);
  sim.engine->fail_elapsed(true);
  EXPECT_EQ(sim.epoch(microseconds(500), true), 10u);
  sim.expect_archive_intact();
  const FeederStats s = sim.core->stats();
  EXPECT_EQ(s.batches, 10u);
  EXPECT_GT(s.bytes, 0u);
  EXPECT_EQ(s.timed_bytes, 0u) << "an untimed copy is not counted as timed";
  EXPECT_EQ(s.h2d_ns, 0u);
}

}  // namespace
}  // namespace stoker
