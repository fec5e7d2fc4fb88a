// DeviceBatch, the consumer's handle on a device buffer, over the feeder's core on the
// simulated engine (sim_engine.hpp): what it keeps when a release fails and after the feeder
// is gone. DeviceBatch is built with CUDA only; these tests make no CUDA call.
#include <gtest/gtest.h>

#if STOKER_HAVE_CUDA
#include <cstring>

#include "feeder_sim.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {
namespace {

using std::chrono::microseconds;
using test::FeederSim;

// Memory that is zeroed when it is freed, as freed memory may be reused at once: whatever
// still points into an object made with it reads zeros, not the object's old values.
template <class T>
struct ZeroingAllocator {
  using value_type = T;
  ZeroingAllocator() = default;
  template <class U>
  ZeroingAllocator(const ZeroingAllocator<U>&) {}  // NOLINT: rebinding, as allocators do
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T))); }
  void deallocate(T* p, size_t n) {
    std::memset(static_cast<void*>(p), 0, n * sizeof(T));
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const ZeroingAllocator<U>&) const {
    return true;
  }
};

// release() on a stream of another GPU fails (cudaEventRecord's rule). The batch used to let
// go of its buffer before the release, so the failed one lost it for good, and a depth-2
// feeder then said "the consumer holds all 2 device buffers" while the consumer held one.
TEST(FaultsDeviceBatch, AReleaseThatFailsKeepsTheBufferForAnotherRelease) {
  FeederSim sim(8);
  CopyEngine::Stream other = sim.engine->create_stream_on(1);
  sim.loader->start_epoch();
  DeviceBatch first = make_device_batch(sim.core, *sim.core->next(*sim.loader));
  EXPECT_THROW(first.release(other), Error);
  EXPECT_TRUE(static_cast<bool>(first)) << "the batch still holds its buffer";
  first.release(sim.consumer);
  EXPECT_FALSE(static_cast<bool>(first));
  DeviceBatch second = make_device_batch(sim.core, *sim.core->next(*sim.loader));
  std::optional<HandedBatch> third;
  EXPECT_NO_THROW(third = sim.core->next(*sim.loader)) << "one buffer held, one free";
  ASSERT_TRUE(third.has_value());
  second.release(sim.consumer);
  sim.core->release(third->buffer, sim.consumer);
  EXPECT_EQ(cuda_calls(), 0u);
}

// A batch kept past its feeder (a loop that logs the last batch's shape): spec() and bytes()
// read the feeder core's spec through a pointer, after the core was freed. The core here
// lives in memory zeroed when freed, so a dangling read shows as a wrong size.
TEST(FaultsDeviceBatch, ABatchsSpecOutlivesTheFeeder) {
  FeederSim sim(4);
  auto core = std::allocate_shared<FeederCore>(ZeroingAllocator<FeederCore>{}, sim.engine,
                                               FeederSim::identity(), true, sim.source->spec());
  sim.loader->start_epoch();
  DeviceBatch batch = make_device_batch(core, *core->next(*sim.loader));
  const size_t bytes = batch.bytes();
  EXPECT_EQ(bytes, FeederSim::kBatch * 512);
  batch.release(sim.consumer);
  core->drain();
  sim.engine->synchronize_device();
  core.reset();  // the feeder's last owner goes
  EXPECT_EQ(batch.bytes(), bytes);
  EXPECT_EQ(batch.spec().shape, sim.source->spec().shape);
  DeviceBatch moved = std::move(batch);
  EXPECT_EQ(moved.spec().bytes(), 512u) << "a moved batch keeps its spec";
}

}  // namespace
}  // namespace stoker
#endif  // STOKER_HAVE_CUDA
