// Which cores each local rank gets when cores are short: ranks share the cores of their GPU's
// NUMA node round robin (never a core of another node while their own has one), and take
// worker cores elsewhere so that no two ranks' workers share a core while there are enough;
// odd topologies (a GPU without a NUMA node) keep planning.
#include <gtest/gtest.h>

#include "plan/core_assignment.hpp"
#include "plan_fixture.hpp"

namespace stoker {
namespace {

using test::fixture;
using test::input_for;
using test::numa_cpus;
using test::plan_all;

// Rule 2: 4 ranks on GPU 0's node 0, of which only 2 cores are allowed. The ranks share
// those two round robin for their training loops (never a core of node 1 while node 0 has
// one); node 1's cores become their worker cores, none shared. Before, ranks 2 and 3 were
// moved whole to node 1, their training loop far from their GPU and memory.
TEST(CoreAssignment, TooManyRanksOnOneNodeShareItsCoresAndWorkOnOthers) {
  auto topo = fixture(test::four_gpu_two_socket(false), "4gpu");
  CpuSet mask = CpuSet::parse("0-1,16-31");
  std::vector<Plan> plans = plan_all(input_for(*topo, 0, 4, {0}, mask));
  CpuSet workers, all;
  for (int r = 0; r < 4; ++r) {
    const Plan& p = plans[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(p.main_cpus, CpuSet::from_list({r % 2}));
    EXPECT_EQ(p.numa, std::vector<int>{0});
    EXPECT_TRUE(p.worker_cpus.is_subset_of(numa_cpus(*topo, 1)));
    EXPECT_FALSE(p.worker_cpus.intersects(workers));
    workers = workers | p.worker_cpus;
    all = all | p.cpus;
  }
  EXPECT_EQ(all, mask);
  EXPECT_EQ(plans[2].reason("cpus"),
            "its GPU is near NUMA node 0; cores of NUMA node 1 added as worker cores, so that no "
            "two of its ranks' workers share a core: only 2 cores for local ranks 0-3: they share "
            "them round robin; this rank has core 0 with local rank 0, and 1 worker core 30 of "
            "NUMA node 1, and 3 spilled");
  // SpillCores=no: node 1 stays idle and the ranks share node 0's two cores, workers too.
  PlanInput in = input_for(*topo, 0, 4, {0}, mask);
  in.profile.spill_cores = false;
  for (const Plan& p : plan_all(in)) {
    EXPECT_EQ(p.cpus, CpuSet::from_list({p.local_rank % 2}));
    EXPECT_EQ(p.worker_cpus, p.cpus);
    EXPECT_NE(p.reason("spill").find("SpillCores=no: the 16 allowed cores of NUMA node 1 "
                                     "(16-31), where no local rank has its GPU, stay idle"),
              std::string::npos)
        << p.reason("spill");
  }
}

// The trimmed DGX-2 of the shared topologies: 2 cores per NUMA node, 8 GPUs on each. Before,
// rank k took core k mod 4, so ranks 8 and 12 (GPUs on node 1) ran on node 0's core 0 while
// their memory was bound to node 1. Now each GPU's ranks share its node's two cores.
TEST(CoreAssignment, SixteenRanksOnTheTrimmedDgx2ShareCoresNearTheirGpus) {
  auto topo = test::shared_topology("nvidiaDGX2.xml");
  if (!topo) GTEST_SKIP() << "shared topologies absent";
  ASSERT_EQ(topo->gpus.size(), 16u);
  std::vector<int> gpus(16);
  for (int g = 0; g < 16; ++g) gpus[g] = g;
  const std::vector<Plan> plans = plan_all(input_for(*topo, 0, 16, gpus));
  for (const Plan& p : plans) {
    const int node = topo->gpus[p.local_rank].numa.at(0);
    SCOPED_TRACE("rank " + std::to_string(p.local_rank) + ": " + p.reason("cpus"));
    EXPECT_TRUE(p.cpus.is_subset_of(numa_cpus(*topo, node)));
    EXPECT_EQ(p.cpus.count(), 1);
    EXPECT_EQ(p.numa, std::vector<int>{node});
  }
  EXPECT_EQ(plans[8].cpus, CpuSet::from_list({24}));
  EXPECT_EQ(plans[12].cpus, CpuSet::from_list({24}));
  EXPECT_EQ(plans[9].cpus, CpuSet::from_list({25}));
  EXPECT_EQ(plans[8].reason("cpus"),
            "its GPU is near NUMA node 1: only 2 cores for local ranks 8-15: they share them round "
            "robin; this rank has core 24 with local ranks 10,12,14");
}

// A short GPU node next to a node with cores to spare: the short node's ranks keep their
// training loops at home and borrow worker cores from the other group's spare.
TEST(CoreAssignment, AShortGpuNodeBorrowsWorkerCoresFromAGroupWithSpare) {
  auto topo = fixture(test::four_gpu_two_socket(false), "4gpu");
  CpuSet mask = CpuSet::parse("0-1,16-31");
  const std::vector<Plan> plans = plan_all(input_for(*topo, 0, 8, {0, 2}, mask));
  CpuSet workers, all;
  for (const Plan& p : plans) {
    SCOPED_TRACE("rank " + std::to_string(p.local_rank) + ": " + p.reason("cpus"));
    const int node = p.local_rank % 2 == 0 ? 0 : 1;
    EXPECT_TRUE(p.main_cpus.is_subset_of(numa_cpus(*topo, node)));
    EXPECT_EQ(p.numa, std::vector<int>{node});
    EXPECT_FALSE(p.worker_cpus.intersects(workers));
    workers = workers | p.worker_cpus;
    all = all | p.cpus;
  }
  EXPECT_EQ(all, mask);
  EXPECT_EQ(plans[4].worker_cpus.to_string(), "30");  // the donor gives its last cores
  EXPECT_EQ(plans[6].worker_cpus.to_string(), "31");
  EXPECT_EQ(plans[1].cpus.count(), 3);  // node 1's 16 cores less 2 lent, among 4 ranks
}

// A GPU hwloc gives no NUMA node (and no local CPUs) plans as a rank without GPU would.
TEST(CoreAssignment, AGpuWithoutANumaNodeKeepsPlanning) {
  auto base = fixture(test::four_gpu_two_socket(false), "4gpu");
  Topology topo = *base;
  topo.gpus[1].numa.clear();
  topo.gpus[1].local_cpus = CpuSet{};
  const std::vector<Plan> plans = plan_all(input_for(topo, 0, 4, {0, 1, 2, 3}));
  CpuSet all;
  for (const Plan& p : plans) {
    EXPECT_FALSE(p.main_cpus.empty());
    EXPECT_FALSE(p.worker_cpus.intersects(all));
    all = all | p.cpus;
  }
  EXPECT_EQ(all, topo.allowed_cpus);
  EXPECT_EQ(plans[1].gpu, topo.gpus[1].pci_bus_id);
  EXPECT_NE(plans[1].reason("cpus").find("no GPU"), std::string::npos) << plans[1].reason("cpus");
}

}  // namespace
}  // namespace stoker
