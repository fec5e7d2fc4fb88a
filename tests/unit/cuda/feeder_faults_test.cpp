// The device feeder's core on the simulated engine (sim_engine.hpp), for what a second read
// of the feeder against CUDA's rules found (issue 39). Each Faults test failed on the feeder
// before its fix.
#include <gtest/gtest.h>

#include "feeder_sim.hpp"

namespace stoker {
namespace {

using std::chrono::microseconds;
using test::FeederSim;
using test::SimEngine;

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
    EXPECT_NE(std::string(e.what()).find("a stream of another GPU"), std::string::npos)
        << e.what();
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

}  // namespace
}  // namespace stoker
