// The simulated engine keeps CUDA's rules where the feeder meets them (sim_engine.hpp): the
// legacy stream is ordered with blocking streams and the calling thread's per-thread stream,
// not with non-blocking ones; a consumer may name a default stream by its special handle
// (cudaStreamLegacy, cudaStreamPerThread), which the engine resolves; copies take time in
// proportion to their size; copies from pageable memory hold the host; a stream of another GPU
// waits for an event but records none; freeing device memory waits for the device.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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
  // A second apart: no scheduling delay on a loaded machine reorders them.
  engine.launch(engine.create_blocking_stream(), microseconds(30000), order.mark("blocking"));
  engine.launch(engine.create_stream(), microseconds(1'000'000), order.mark("non-blocking"));
  engine.launch(nullptr, microseconds(0), order.mark("legacy"));
  engine.synchronize_device();
  EXPECT_EQ(order.ran, (std::vector<std::string>{"blocking", "legacy", "non-blocking"}));
}

TEST(SimEngine, BlockingAndPerThreadStreamsWaitForTheLegacyStream) {
  SimEngine engine(microseconds(100));
  Order order;
  engine.launch(SimEngine::legacy_handle(), microseconds(1'000'000), order.mark("legacy"));
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

// Copies take time in proportion to their size when the engine has a rate.
TEST(SimEngine, ACopyTakesItsBytesAtTheRate) {
  SimEngine engine(microseconds(0), 0.1);  // 100 bytes a microsecond
  std::byte* device = engine.allocate(2'000'000);
  std::vector<std::byte> host(2'000'000);
  CopyEngine::Stream s = engine.create_stream();
  const auto t0 = std::chrono::steady_clock::now();
  engine.copy(device, host.data(), host.size(), s);
  engine.synchronize(s);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  engine.deallocate(device);
}

// A stream of another GPU may wait for an event of the engine's GPU, but not record one
// (cudaEventRecord's rule), and the wait orders it.
TEST(SimEngine, AStreamOfAnotherGpuMayWaitForAnEventButNotRecordIt) {
  SimEngine engine(microseconds(100));
  Order order;
  CopyEngine::Stream mine = engine.create_stream(), other = engine.create_stream_on(1);
  CopyEngine::Event e = engine.create_event(false);
  EXPECT_FALSE(engine.on_device(other));
  EXPECT_THROW(engine.record(e, other), Error);
  engine.launch(mine, microseconds(1'000'000), order.mark("GPU 0"));
  engine.record(e, mine);
  engine.stream_wait(other, e);
  engine.launch(other, microseconds(0), order.mark("GPU 1"));
  engine.synchronize(other);
  EXPECT_EQ(order.ran, (std::vector<std::string>{"GPU 0", "GPU 1"}));
  engine.destroy_event(e);
}

// cudaFree waits for the work queued on every stream of the device before it frees.
TEST(SimEngine, FreeingDeviceMemoryWaitsForEveryStreamOfTheDevice) {
  SimEngine engine(microseconds(100));
  std::byte* device = engine.allocate(64);
  engine.launch(engine.create_stream(), microseconds(200'000), nullptr);
  auto t0 = std::chrono::steady_clock::now();
  engine.deallocate(device);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(150));
  engine.set_free_waits(false);
  device = engine.allocate(64);
  engine.launch(engine.create_stream(), microseconds(1'000'000), nullptr);
  t0 = std::chrono::steady_clock::now();
  engine.deallocate(device);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  engine.synchronize_device();
}

// What cudaFree's wait means for the feeder: the last owner of its core (the DeviceFeeder,
// or the last DeviceBatch) returns only once the GPU has run everything queued on it, the
// application's unrelated kernels too. Such a kernel never ends when it is an allreduce
// with a dead peer: hence the trainer aborts its communicator before any destructor runs.
// The copies and release points alone take a few milliseconds here.
TEST(FeederOrder, TheFeedersLastOwnerWaitsForEveryStreamOfTheGpu) {
  FeederSim sim(4);
  sim.loader->start_epoch();
  std::optional<HandedBatch> h = sim.core->next(*sim.loader);
  ASSERT_TRUE(h.has_value());
  sim.step(*h, microseconds(500));
  sim.core->release(h->buffer, sim.consumer);
  sim.core->drain();
  sim.engine->launch(sim.engine->create_stream(), microseconds(300'000), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  sim.core.reset();
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
  EXPECT_EQ(sim.engine->live_blocks(), 0u);
}

// With an arena that is not page-locked the host stages each copy inside next(), after the
// copy stream's earlier work: next() takes the copies' time, and input_wait_ns (the loader's
// time alone) does not count it. DeviceFeeder::next documents it; this holds
// the simulation and the statistics to that text.
TEST(FeederOrder, WithAPageableArenaNextTakesTheCopiesTimeOutsideTheInputWait) {
  FeederSim sim(6, microseconds(10000));
  sim.engine->set_pageable(true);
  sim.loader->start_epoch();
  while (!sim.loader->next_ready()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<HandedBatch> h = sim.core->next(*sim.loader);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(h.has_value());
  EXPECT_GE(took, std::chrono::milliseconds(20)) << "a batch's two copies, made by the host";
  EXPECT_LT(std::chrono::nanoseconds(sim.core->stats().input_wait_ns), took / 2);
  sim.core->release(h->buffer, sim.consumer);
}

}  // namespace
}  // namespace stoker
