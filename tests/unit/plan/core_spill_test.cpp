// The spill: cores on NUMA nodes where no local rank has its GPU become worker cores of the
// nearest ranks (water-filled, in contiguous runs), while each rank's training loop, memory
// and NIC stay on its GPU's node; SpillCores=no leaves them idle and says so.
#include <gtest/gtest.h>

#include "plan/core_spill.hpp"
#include "plan_fixture.hpp"

namespace stoker {
namespace {

using test::fixture;
using test::input_for;
using test::numa_cpus;
using test::plan_all;

int cores_in(const Topology& topo, const CpuSet& cpus) {
  int n = 0;
  for (const Core& c : topo.cores) n += c.pus.intersects(cpus) ? 1 : 0;
  return n;
}

// The spill's example node: AMD EPYC in NPS4, 8 NUMA nodes of 8 cores, GPUs in pairs on
// nodes 1, 3, 5, 7. Before the spill each of 8 ranks had 4 cores (3 worker cores) and 32 cores ran
// nothing.
TEST(CoreSpill, EightRanksOnTheNps4NodeUseAll64CoresWithSevenWorkerCoresEach) {
  auto topo = test::shared_topology("synthetic-epyc-nps4-2x32c-8gpu.xml");
  if (!topo) GTEST_SKIP() << "shared topologies absent";
  const std::vector<Plan> plans = plan_all(input_for(*topo, 0, 8, {0, 1, 2, 3, 4, 5, 6, 7}));
  CpuSet all;
  for (const Plan& p : plans) {
    SCOPED_TRACE("rank " + std::to_string(p.local_rank) + ": " + p.reason("spill"));
    const int node = topo->gpus[p.local_rank].numa.at(0);
    EXPECT_GE(cores_in(*topo, p.worker_cpus), 7);
    EXPECT_TRUE(p.main_cpus.is_subset_of(numa_cpus(*topo, node)));
    EXPECT_EQ(p.numa, std::vector<int>{node});
    EXPECT_EQ(p.nics.size(), 2u);  // ibN and mlx5_N beside the GPU
    // 4 spilled cores of the GPU-less node before its GPU's, named in the reason.
    const CpuSet spilled = p.cpus - numa_cpus(*topo, node);
    EXPECT_EQ(spilled, p.cpus & numa_cpus(*topo, node - 1));
    EXPECT_EQ(cores_in(*topo, spilled), 4);
    EXPECT_NE(
        p.reason("spill").find("this rank has 4 cores, " + spilled.to_string() + " (NUMA node " +
                               std::to_string(node - 1) + ", same package), for workers only"),
        std::string::npos);
    EXPECT_FALSE(p.cpus.intersects(all));
    all = all | p.cpus;
  }
  EXPECT_EQ(cores_in(*topo, all), 64);
}

// The same node with SpillCores=no: what the planner gave before, and the reason says so.
TEST(CoreSpill, SpillCoresNoLeavesTheGpuLessNodesIdle) {
  auto topo = fixture(test::dgx_a100_like(), "dgx-a100");
  PlanInput in = input_for(*topo, 0, 8, {0, 1, 2, 3, 4, 5, 6, 7});
  in.profile.spill_cores = false;
  CpuSet all;
  for (const Plan& p : plan_all(in)) {
    EXPECT_EQ(p.cpus.count(), 16);
    all = all | p.cpus;
    EXPECT_EQ(p.reason("spill"),
              "SpillCores=no: the 64 allowed cores of NUMA node 0,2,4,6 "
              "(0-15,32-47,64-79,96-111,128-143,160-175,192-207,224-239), where no local rank has "
              "its GPU, stay idle");
  }
  EXPECT_EQ(all.count(), 128);  // of 256 PUs
  EXPECT_FALSE(builtin_profiles().get("nlp").spill_cores);
  EXPECT_FALSE(builtin_profiles().get("netfs").spill_cores);
  EXPECT_TRUE(builtin_profiles().get("balanced").spill_cores);
  EXPECT_TRUE(builtin_profiles().get("cv").spill_cores);
}

// Rule 11: the runtime re-plans a tuned task alone (0 of 1) within the plugin's binding; a
// spilled plan must come back the same, shared main core included.
TEST(CoreSpill, ARankPlannedAloneWithinItsOwnCoresGetsTheSamePlan) {
  auto dgx = fixture(test::dgx_a100_like(), "dgx-a100");
  auto four = fixture(test::four_gpu_two_socket(false), "4gpu");
  struct Case {
    const Topology* topo;
    PlanInput in;
  };
  const std::vector<Case> cases = {
      {dgx.get(), input_for(*dgx, 0, 8, {0, 1, 2, 3, 4, 5, 6, 7})},
      {dgx.get(), input_for(*dgx, 0, 3, {0, 2, 4})},
      {four.get(), input_for(*four, 0, 4, {0}, CpuSet::parse("0-1,16-31"))},
  };
  for (Case c : cases)
    for (c.in.local_rank = 0; c.in.local_rank < c.in.local_size; ++c.in.local_rank)
      test::expect_same_alone(c.in, "spill");
}

// spill_units on the DGX-A100 fixture: node 0's 16 cores, equally near three ranks of
// package 0 that have 10, 6 and 8 cores already, end as even as they can (14, 13, 13), in
// contiguous runs by rank; node 4's cores go to the rank of package 1 alone.
TEST(CoreSpill, SpillUnitsWaterFillsTheNearestRanksInContiguousRuns) {
  auto topo = fixture(test::dgx_a100_like(), "dgx-a100");
  const auto units = planner::make_units(*topo, topo->allowed_cpus, false);
  std::vector<int> free;
  for (size_t u = 0; u < units.size(); ++u)
    if (units[u].numa == 0 || units[u].numa == 4) free.push_back(static_cast<int>(u));
  const std::vector<planner::SpillTaker> takers = {
      {0, {3}, 10}, {1, {3}, 6}, {2, {1}, 8}, {3, {7}, 20}};
  const auto got = planner::spill_units(*topo, units, free, takers);
  ASSERT_EQ(got.size(), 4u);
  auto pus = [&](const std::vector<int>& list) { return planner::pus_of(units, list); };
  EXPECT_EQ(pus(got[0]).to_string(), "0-3,128-131");
  EXPECT_EQ(pus(got[1]).to_string(), "4-10,132-138");
  EXPECT_EQ(pus(got[2]).to_string(), "11-15,139-143");
  EXPECT_EQ(pus(got[3]), numa_cpus(*topo, 4));
  EXPECT_EQ(planner::spill_nearness(*topo, {3}, 0), "hwloc distance 12");
}

}  // namespace
}  // namespace stoker
