// Loader::next_ready: whether next() would return at once. The device feeder tops up its
// copies only with batches that are ready, so a queued batch never waits behind the loader.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "loader_fixture.hpp"

using namespace stoker;
using namespace std::chrono_literals;

namespace {

// Polls until `ready()` or 10 s (a generous bound on this shared 2-core machine).
template <class F>
bool eventually(F ready) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(FaultsNextReady, FalseBeforeAnEpochTrueOnceABatchOrTheEndIsThere) {
  test::TokenSetup t(64);
  Loader loader(t.source, t.copy, test::test_options(16, 2, 2));
  EXPECT_FALSE(loader.next_ready());  // next() would start an epoch and wait for it
  loader.start_epoch();
  ASSERT_TRUE(eventually([&] { return loader.next_ready(); }));
  uint64_t batches = 0;
  while (auto b = loader.next()) {
    ++batches;
    if (batches == loader.batches_per_epoch()) {
      EXPECT_TRUE(loader.next_ready()) << "the epoch's end: next() returns nullopt at once";
    }
  }
  EXPECT_EQ(batches, 4u);
}

TEST(FaultsNextReady, FalseWhileTheNextBatchIsStillBeingMade) {
  test::TokenSetup t(64);
  // Every sample takes 50 ms: the first batch of 16 samples cannot be ready at once.
  auto slow = std::make_shared<test::SlowCopy>(t.source->spec(), 1, 50ms);
  Loader loader(t.source, slow, test::test_options(16, 1, 2));
  loader.start_epoch();
  EXPECT_FALSE(loader.next_ready());
  auto b = loader.next();  // waits for it
  ASSERT_TRUE(b.has_value());
}

}  // namespace
