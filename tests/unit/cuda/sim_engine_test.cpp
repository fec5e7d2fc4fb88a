// The simulated engine keeps CUDA's rules for the default streams (sim_engine.hpp): the legacy
// stream is ordered with blocking streams and the calling thread's per-thread stream, not
// with non-blocking ones; and the feeder serves a consumer that names a default stream by its
// special handle (cudaStreamLegacy, cudaStreamPerThread), which the engine must resolve, not
// take for a stream of its own.
#include <gtest/gtest.h>

#include <atomic>

#include "feeder_sim.hpp"

namespace stoker {
namespace {

using std::chrono::microseconds;
using test::FeederSim;
using test::SimEngine;

// The order in which "kernels" ran, by name.
struct Order {
  std::mutex mu;
  std::vector<std::string> ran;
  std::function<void()> mark(std::string name) {
    return [this, name] {
      std::lock_guard lock(mu);
      ran.push_back(name);
    };
  }
};

TEST(SimEngine, TheLegacyStreamWaitsForBlockingStreamsNotForNonBlockingOnes) {
  SimEngine engine(microseconds(100));
  Order order;
  engine.launch(engine.create_blocking_stream(), microseconds(30000), order.mark("blocking"));
  engine.launch(engine.create_stream(), microseconds(90000), order.mark("non-blocking"));
  engine.launch(nullptr, microseconds(0), order.mark("legacy"));
  engine.synchronize_device();
  EXPECT_EQ(order.ran, (std::vector<std::string>{"blocking", "legacy", "non-blocking"}));
}

TEST(SimEngine, BlockingAndPerThreadStreamsWaitForTheLegacyStream) {
  SimEngine engine(microseconds(100));
  Order order;
  engine.launch(SimEngine::legacy_handle(), microseconds(30000), order.mark("legacy"));
  engine.launch(engine.create_blocking_stream(), microseconds(0), order.mark("blocking"));
  engine.launch(SimEngine::per_thread_handle(), microseconds(0), order.mark("per-thread"));
  engine.launch(engine.create_stream(), microseconds(0), order.mark("non-blocking"));
  engine.synchronize_device();
  ASSERT_EQ(order.ran.size(), 4u);
  EXPECT_EQ(order.ran.front(), "non-blocking");
  EXPECT_EQ(order.ran[1], "legacy");
}

TEST(FeederOrder, AConsumerOnADefaultStreamHandleGetsEveryBatchIntact) {
  for (CopyEngine::Stream s : {SimEngine::legacy_handle(), SimEngine::per_thread_handle()}) {
    FeederSim sim(8);
    sim.consumer = s;  // wait_on, the kernels and release on the default stream
    EXPECT_EQ(sim.epoch(microseconds(2000), true), 8u);
    sim.expect_archive_intact();
    EXPECT_EQ(sim.engine->faults(), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace stoker
