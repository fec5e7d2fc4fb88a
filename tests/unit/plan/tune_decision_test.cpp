// Whether a step's tasks are tuned: the admin's TunePolicy, the user's --stoker and the
// step's kind.
#include "stoker/plan/tune_decision.hpp"

#include <gtest/gtest.h>

#include "enum_names_check.hpp"

namespace stoker {
namespace {

TEST(ShouldTune, PoliciesRequestsAndSteps) {
  UserOptions none, off, on;
  off.enable = TuneRequest::Off;
  on.enable = TuneRequest::On;
  EXPECT_FALSE(should_tune(TunePolicy::OptIn, false, none, false, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(TunePolicy::OptIn, false, on, true, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(TunePolicy::OptIn, false, none, true, StepKind::Normal).tune);
  EXPECT_FALSE(should_tune(TunePolicy::OptIn, false, off, true, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(TunePolicy::Always, false, none, false, StepKind::Normal).tune);
  EXPECT_EQ(should_tune(TunePolicy::Always, false, off, true, StepKind::Normal).why_not,
            "--stoker=off");
  EXPECT_FALSE(should_tune(TunePolicy::Always, false, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(TunePolicy::Always, false, none, false, StepKind::Extern).tune);
  EXPECT_TRUE(should_tune(TunePolicy::Always, true, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(TunePolicy::Always, true, none, false, StepKind::Extern).tune);
  EXPECT_FALSE(should_tune(TunePolicy::Never, false, on, true, StepKind::Normal).tune);
}

TEST(StepKind, SlurmsSpecialIds) {
  EXPECT_EQ(step_kind(0), StepKind::Normal);
  EXPECT_EQ(step_kind(0xfffffffb), StepKind::Batch);
  EXPECT_EQ(step_kind(0xfffffffc), StepKind::Extern);
  EXPECT_EQ(step_kind(0xfffffffa), StepKind::Interactive);
}

TEST(TunePolicy, OneTableForThePlugstackArgument) {
  expect_names_round_trip(
      kTunePolicyNames, [](TunePolicy p) { return to_string(p); }, parse_tune_policy);
  EXPECT_EQ(names_of(kTunePolicyNames, ", "), "always, opt-in, never");
}

}  // namespace
}  // namespace stoker
