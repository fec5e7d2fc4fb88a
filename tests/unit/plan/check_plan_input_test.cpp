// check_plan_input: each bad input named, with what to give instead.
#include <gtest/gtest.h>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

using test::fixture;
using test::input_for;

std::string check_error(const PlanInput& in) {
  try {
    check_plan_input(in);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CheckPlanInput, NamesTheBadInput) {
  auto topo = fixture(test::four_gpu_two_socket(false), "4gpu");
  PlanInput ok = input_for(*topo, 1, 2, {0, 1});
  EXPECT_EQ(check_error(ok), "(no error)");
  PlanInput in = ok;
  in.allowed = CpuSet{};
  EXPECT_EQ(check_error(in),
            "CPU mask: the CPU mask is empty (give CPUs of the node (it has 0-31))");
  in = ok;
  in.allowed = CpuSet::parse("30-40");
  EXPECT_EQ(check_error(in),
            "CPU mask: CPUs 32-40 are not on this node (give CPUs of the node (it has 0-31))");
  in = ok;
  in.local_rank = 2;
  EXPECT_EQ(
      check_error(in),
      "local rank: local rank 2 is not below the local size 2 (give a local rank from 0 to 1)");
  in.local_size = 0;
  EXPECT_EQ(
      check_error(in),
      "local size: local size 0 is below 1 (give the number of ranks on this node, 1 or more)");
  in = ok;
  in.mem_limit = 0;
  EXPECT_EQ(check_error(in),
            "memory limit: the memory limit is 0 (give the bytes a rank may use, e.g. 64G)");
  in = ok;
  in.local_gpus = {0, 4};
  EXPECT_EQ(check_error(in),
            "GPU: GPU index 4 of local rank 1 is not on this node, which has 4 "
            "GPU(s) (give GPU ids from 0 to 3)");
  in = ok;
  in.profile.max_prefetch = 1;
  EXPECT_EQ(check_error(in),
            "profile 'balanced': MinPrefetch=2 is above MaxPrefetch=1 (fix the profile's values)");
  in = ok;
  in.topology = nullptr;
  EXPECT_EQ(check_error(in),
            "topology: no topology given (load one from this machine or an hwloc XML file)");
}

}  // namespace
}  // namespace stoker
