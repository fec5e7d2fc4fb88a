// The suggested change for a run, in the planner's own terms.
#include <gtest/gtest.h>

#include "stoker/record/run_advice.hpp"

using namespace stoker;

namespace {

RunRecord run(double wait, double at_max, int prefetch_max, int budget, const char* reason) {
  RunRecord r;
  r.job = "42";
  r.plan.profile = "cv";
  r.wait_share = wait;
  r.at_max_share = at_max;
  r.prefetch_max = prefetch_max;
  r.budget_depth = budget;
  r.prefetch_max_reason = reason;
  r.workers = 3;
  r.plan.cpus = CpuSet::range(0, 3);
  return r;
}

}  // namespace

TEST(RunAdvice, AShallowMaxUnderTheProfilesCapSaysRaiseMaxPrefetch) {
  const RunAdvice a = advise(run(0.4, 0.71, 8, 14,
                                 "room to grow: 2 x prefetch 4, at least 8 = "
                                 "8, lowered to MaxPrefetch=8"));
  EXPECT_EQ(a.kind, Advice::RaiseMaxPrefetch);
  EXPECT_EQ(a.text,
            "depth sat at prefetch_max 8 for 71 % of the run, 40 % wait: the budget allows 14; "
            "raise MaxPrefetch in profile cv");
}

TEST(RunAdvice, EachCauseHasItsChange) {
  EXPECT_EQ(advise(run(0.02, 0.9, 8, 14, "")).kind, Advice::None);
  EXPECT_EQ(advise(run(0.3, 0.9, 8, 14, "= prefetch: a requested depth is fixed")).kind,
            Advice::UserFixedDepth);
  EXPECT_EQ(advise(run(0.3, 0.9, 8, 14, "room to grow: 2 x prefetch 4")).kind,
            Advice::RaisePrefetchPerWorker);
  EXPECT_EQ(advise(run(0.3, 0.9, 8, 8, "lowered to 8")).kind, Advice::MoreMemory);
  EXPECT_EQ(advise(run(0.4, 0.1, 8, 14, "")).text,
            "3 workers on 4 cores, 40 % wait: ask for more cores per GPU (--cpus-per-task)");
  RunRecord few = run(0.4, 0.1, 8, 14, "");
  few.workers = 2;
  few.plan.cpus = CpuSet::range(0, 7);
  EXPECT_EQ(advise(few).kind, Advice::RaiseWorkerFraction);
  RunRecord copied = run(0.4, 0.1, 16, 16, "");
  copied.workers = 8;
  copied.plan.cpus = CpuSet::range(0, 1);
  EXPECT_EQ(advise(copied).kind, Advice::TooManyWorkers);
  copied.wait_share = 0;  // starved or not: the copied setting is named
  EXPECT_EQ(advise(copied).kind, Advice::TooManyWorkers);
  EXPECT_EQ(verdict_line(run(0.4, 0.1, 8, 14, ""))
                .rfind("stoker: job 42 rank 0 waited 40 % for input: ", 0),
            0u);
}
