// The prefetch controller on its own: scripted observations in, depth decisions out.
#include <gtest/gtest.h>

#include "enum_names_check.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/prefetch_controller.hpp"

using namespace stoker;

namespace {

ControllerConfig config(int initial, int max_depth, int min_depth = 2) {
  ControllerConfig c;
  c.initial_depth = initial;
  c.min_depth = min_depth;
  c.max_depth = max_depth;
  c.calm_batches = 10;
  return c;
}

PrefetchObservation waited(uint64_t t, bool filled = true) {
  return {t, 1'000'000, 500'000, 0, filled};
}
PrefetchObservation calm(uint64_t t) {
  return {t, 0, 500'000, 2, true};
}

}  // namespace

TEST(PrefetchController, StartsAtInitialDepth) {
  EXPECT_EQ(PrefetchController(config(4, 16)).depth(), 4);
  EXPECT_EQ(PrefetchController(config(16, 16)).depth(), 16);
  PrefetchController c(config(4, 16), 77);
  ASSERT_EQ(c.history().size(), 1u);
  EXPECT_EQ(c.history()[0].reason, DepthReason::Start);
  EXPECT_EQ(c.history()[0].time_ns, 77u);
  EXPECT_EQ(c.history()[0].to, 4);
}

TEST(PrefetchController, RaisesWhenConsumerWaitsAndProducersCouldFill) {
  PrefetchController c(config(2, 16));
  EXPECT_EQ(c.observe(waited(1)), 3);
  // Cooldown: the new depth (3) gets 3 batches to fill before the next judgement.
  EXPECT_EQ(c.observe(waited(2)), 3);
  EXPECT_EQ(c.observe(waited(3)), 3);
  EXPECT_EQ(c.observe(waited(4)), 3);
  EXPECT_EQ(c.observe(waited(5)), 4);
  ASSERT_EQ(c.history().size(), 3u);
  EXPECT_EQ(c.history()[1].reason, DepthReason::ConsumerWaited);
  EXPECT_EQ(c.history()[1].from, 2);
  EXPECT_EQ(c.history()[1].to, 3);
  EXPECT_EQ(c.history()[2].time_ns, 5u);
  EXPECT_EQ(c.history()[1].describe(), "batch 1: 2 -> 3 (consumer waited 1.00 ms)");
}

TEST(PrefetchController, DoesNotRaiseWhenProducersAreTheBottleneck) {
  PrefetchController c(config(2, 16));
  for (uint64_t t = 0; t < 50; ++t) EXPECT_EQ(c.observe(waited(t, false)), 2);
  EXPECT_EQ(c.producer_bound_waits(), 50u);
  EXPECT_EQ(c.history().size(), 1u);
}

TEST(PrefetchController, RareFillsDoNotMakeAWaitWorthMoreDepth) {
  PrefetchController c(config(2, 16));
  // The ring filled once in ten batches: the producers are mostly behind.
  for (uint64_t t = 0; t < 100; ++t) EXPECT_EQ(c.observe(waited(t, t % 10 == 9)), 2);
  EXPECT_EQ(c.producer_bound_waits(), 100u);
}

TEST(PrefetchController, ShortWaitsAreNoise) {
  PrefetchController c(config(2, 16));
  for (uint64_t t = 0; t < 5; ++t) EXPECT_EQ(c.observe({t, 40'000, 500'000, 0, true}), 2);
}

TEST(PrefetchController, AWaitLongerThanHalfATinyBatchCounts) {
  PrefetchController c(config(2, 16));
  // Batches made in 10 us: a 20 us wait is starvation, although below min_wait_ns.
  EXPECT_EQ(c.observe({0, 20'000, 10'000, 0, true}), 3);
}

TEST(PrefetchController, NeverExceedsMaxDepth) {
  PrefetchController c(config(2, 5));
  EXPECT_EQ(c.max_depth(), 5);
  int depth = 0;
  for (uint64_t t = 0; t < 200; ++t) depth = c.observe(waited(t));
  EXPECT_EQ(depth, 5);
  for (const DepthChange& ch : c.history()) EXPECT_LE(ch.to, 5);
}

TEST(PrefetchController, EqualBoundsFixTheDepth) {
  // --stoker-prefetch=N: the plan's prefetch = prefetch_max = N, neither wait nor calm moves it.
  PrefetchController c(config(4, 4, 4));
  for (uint64_t t = 0; t < 200; ++t) EXPECT_EQ(c.observe(t % 2 ? waited(t) : calm(t)), 4);
  for (uint64_t t = 0; t < 200; ++t) EXPECT_EQ(c.observe(calm(200 + t)), 4);
  EXPECT_EQ(c.history().size(), 1u);
}

TEST(PrefetchController, LowersWhenConsumerNeverWaits) {
  PrefetchController c(config(6, 16));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c.observe(calm(i)), 6);
  EXPECT_EQ(c.observe(calm(9)), 5);  // 10 calm batches
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c.observe(calm(10 + i)), 5);
  EXPECT_EQ(c.observe(calm(19)), 4);
  for (int i = 0; i < 1000; ++i) c.observe(calm(20 + i));
  EXPECT_EQ(c.depth(), 2);  // min_depth
  EXPECT_EQ(c.history().back().reason, DepthReason::NeverWaited);
  EXPECT_EQ(c.history().back().describe(), "batch 40: 3 -> 2 (consumer never waited)");
}

TEST(PrefetchController, AWaitResetsTheCalmStreak) {
  PrefetchController c(config(6, 6));
  for (int i = 0; i < 9; ++i) c.observe(calm(i));
  c.observe(waited(9));  // at max: no raise, but the streak restarts
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c.observe(calm(10 + i)), 6);
  EXPECT_EQ(c.observe(calm(19)), 5);
}

TEST(PrefetchController, HistoryIsBoundedAndCounted) {
  ControllerConfig cfg = config(2, 3);
  cfg.calm_batches = 1;
  PrefetchController c(cfg);
  // Alternate raise (2 -> 3) and lower (3 -> 2) many times.
  for (int i = 0; i < 3000; ++i) {
    c.observe(waited(i));
    for (int k = 0; k < 4; ++k) c.observe(calm(i));
  }
  EXPECT_EQ(c.history().size(), PrefetchController::kHistoryCapacity);
  EXPECT_GT(c.history_dropped(), 0u);
}

TEST(PrefetchController, BoundsOutOfOrderAreAnErrorNotClamped) {
  const auto error_of = [](ControllerConfig cfg) {
    try {
      PrefetchController c(cfg);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(config(40, 16)),
            "prefetch controller initial_depth: is 40, outside 2..16 (keep 1 <= min_depth <= "
            "initial_depth <= max_depth <= 4096)");
  EXPECT_EQ(error_of(config(0, 16)).rfind("prefetch controller initial_depth: is 0", 0), 0u);
  EXPECT_EQ(error_of(config(2, 16, 3)).rfind("prefetch controller initial_depth: is 2", 0), 0u);
  EXPECT_EQ(error_of(config(2, 16, 0)).rfind("prefetch controller min_depth: is 0", 0), 0u);
  EXPECT_EQ(error_of(config(2, 5000)).rfind("prefetch controller max_depth: is 5000", 0), 0u);
}

TEST(DepthReason, NamesReadBothWays) {
  expect_names_round_trip(
      kDepthReasonNames, [](DepthReason r) { return to_string(r); },
      [](std::string_view s) { return value_named(kDepthReasonNames, s); });
}
