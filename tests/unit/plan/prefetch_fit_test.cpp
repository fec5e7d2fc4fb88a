// The prefetch contract in the planner: prefetch (the starting depth) and prefetch_max (the
// most the loader's controller may grow to), one budget fit (fit_prefetch), and a requested
// depth that is fixed.
#include <gtest/gtest.h>

#include "plan_fixture.hpp"

namespace stoker {
namespace {

using test::fixture;
using test::input_for;

TEST(Planner, PrefetchMaxIsRoomToGrowWithinMaxPrefetchAndTheBudget) {
  auto topo = fixture(test::cpu_only_single_numa(16, false), "cpu16");
  PlanInput in = input_for(*topo, 0, 1);
  in.profile.max_prefetch = 256;
  Plan p = make_plan(in);  // 22 batches of 64 MiB to start; 4 x 22 = 88 of 256 that fit
  EXPECT_EQ(p.prefetch, 22);
  EXPECT_EQ(p.prefetch_max, 88);
  EXPECT_EQ(p.reason("prefetch_max"), "room to grow: 4 x prefetch 22, at least 8 = 88");

  in.profile = builtin_profiles().get("balanced");  // MaxPrefetch=64
  EXPECT_EQ(make_plan(in).prefetch_max, 64);
  EXPECT_EQ(make_plan(in).reason("prefetch_max"),
            "room to grow: 4 x prefetch 22, at least 8 = 88, lowered to MaxPrefetch=64");

  in.batch_bytes_hint = uint64_t{512} << 20;  // the 16 GiB budget holds 32 batches
  p = make_plan(in);
  EXPECT_EQ(p.prefetch, 22);
  EXPECT_EQ(p.prefetch_max, 32);
  EXPECT_EQ(p.reason("prefetch_max"),
            "room to grow: 4 x prefetch 22, at least 8 = 88, lowered to MaxPrefetch=64; "
            "lowered to 32: the budget holds 32 batch(es) of 512 MiB");

  auto small = fixture(test::cpu_only_single_numa(2, false), "cpu2");
  p = make_plan(input_for(*small, 0, 1));  // one worker: prefetch 2, room at least 8
  EXPECT_EQ(p.prefetch, 2);
  EXPECT_EQ(p.prefetch_max, 8);
}

TEST(FaultsPlan, ARequestedPrefetchIsFixedNotAStartingDepth) {
  // --stoker-prefetch=N promised N batches in flight, while the loader grew the ring to 64.
  auto topo = fixture(test::cpu_only_single_numa(16, false), "cpu16");
  PlanInput in = input_for(*topo, 0, 1);
  in.overrides.prefetch = 6;
  Plan p = make_plan(in);
  EXPECT_EQ(p.prefetch, 6);
  EXPECT_EQ(p.prefetch_max, 6);
  EXPECT_EQ(p.reason("prefetch_max"), "= prefetch: a requested depth is fixed (no growth)");
  in.batch_bytes_hint = uint64_t{4} << 30;  // the budget holds 4: both lowered together
  p = make_plan(in);
  EXPECT_EQ(p.prefetch, 4);
  EXPECT_EQ(p.prefetch_max, 4);
}

TEST(Planner, FitPrefetchLowersOnlyAndCountsHeldBatches) {
  Plan p;
  p.prefetch = 4;
  p.prefetch_max = 16;
  p.mem_budget = 1000;
  ASSERT_TRUE(fit_prefetch(p, 100, 2));  // holds 10, 2 held: a ring of up to 8
  EXPECT_EQ(p.prefetch_max, 8);
  EXPECT_EQ(p.prefetch, 4);
  EXPECT_EQ(p.batch_bytes, 100u);
  EXPECT_EQ(p.reason("prefetch_max"),
            "lowered to 8: the budget holds 10 batch(es) of 100 B, 2 of them held by the consumer");
  ASSERT_TRUE(fit_prefetch(p, 10, 2));  // smaller batches never raise a depth
  EXPECT_EQ(p.prefetch_max, 8);
  ASSERT_TRUE(fit_prefetch(p, 300, 0));  // holds 3: both lowered
  EXPECT_EQ(p.prefetch_max, 3);
  EXPECT_EQ(p.prefetch, 3);
  const Plan before = p;
  EXPECT_FALSE(fit_prefetch(p, 400, 2));  // holds 2, both held: no ring fits
  EXPECT_EQ(p, before);
}

}  // namespace
}  // namespace stoker
