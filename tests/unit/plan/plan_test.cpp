// The Plan's own members and the bind modes' names.
#include "stoker/plan/plan.hpp"

#include <gtest/gtest.h>

#include "enum_names_check.hpp"

namespace stoker {
namespace {

TEST(Plan, ReasonJoinsAFieldsReasons) {
  Plan p;
  p.reasons = {{"cpus", "one"}, {"workers", "two"}, {"cpus", "three"}};
  EXPECT_EQ(p.reason("cpus"), "one; three");
  EXPECT_EQ(p.reason("workers"), "two");
  EXPECT_EQ(p.reason("gpu"), "");
  EXPECT_EQ((Reason{"a", "b"}), (Reason{"a", "b"}));
  EXPECT_FALSE((Reason{"a", "b"}) == (Reason{"a", "c"}));
}

TEST(BindMode, OneTableForTheFlagTheEnvironmentAndThePrinters) {
  expect_names_round_trip(
      kBindModeNames, [](BindMode b) { return to_string(b); }, parse_bind_mode);
  EXPECT_EQ(names_of(kBindModeNames), "gpu-numa, even or none");
}

}  // namespace
}  // namespace stoker
