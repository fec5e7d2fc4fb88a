// The planner's rules on hand-picked cases: GPU-NUMA placement, fallback by distance,
// bind modes, workers, prefetch and budget, pinning, NICs, bad input (make_plan never throws).
#include <gtest/gtest.h>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

using test::fixture;
using test::input_for;
using test::numa_cpus;
using test::plan_all;

// Each rank's training loop, memory and NIC on its GPU's node; the GPU-less nodes of its
// package (0, 2, 4, 6) spill to it as worker cores (before the spill they ran nothing).
TEST(Planner, DgxA100EightRanksSitOnTheirGpusNodes) {
  auto topo = fixture(test::dgx_a100_like(), "dgx-a100");
  ASSERT_EQ(topo->gpus.size(), 8u);
  std::vector<Plan> plans = plan_all(input_for(*topo, 0, 8, {0, 1, 2, 3, 4, 5, 6, 7}));
  const int gpu_node[8] = {3, 3, 1, 1, 7, 7, 5, 5};
  const int spill_node[8] = {0, 0, 2, 2, 4, 4, 6, 6};  // 8 cores each, in rank order
  const char* hca[8] = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1",
                        "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"};
  CpuSet seen;
  for (int r = 0; r < 8; ++r) {
    const Plan& p = plans[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    const CpuSet home = p.cpus & numa_cpus(*topo, gpu_node[r]);
    EXPECT_EQ(home.count(), 16);  // 8 of the node's 16 cores, SMT siblings together
    EXPECT_EQ(p.cpus - home, p.cpus & numa_cpus(*topo, spill_node[r]));
    EXPECT_EQ((p.cpus - home).count(), 16);  // 8 spilled cores
    EXPECT_TRUE(p.main_cpus.is_subset_of(home));
    EXPECT_FALSE(p.cpus.intersects(seen));
    seen = seen | p.cpus;
    for (int pu : p.cpus.list()) EXPECT_TRUE(p.cpus.test(pu < 128 ? pu + 128 : pu - 128));
    EXPECT_EQ(p.numa, std::vector<int>{gpu_node[r]});
    EXPECT_EQ(p.gpu, topo->gpus[r].pci_bus_id);
    EXPECT_EQ(p.nics, std::vector<std::string>{hca[r]});
    EXPECT_EQ(p.main_cpus.count(), 2);
    EXPECT_EQ(p.worker_cpus.count(), 30);
    EXPECT_EQ(p.workers, 11);  // round(0.75 x 15)
    EXPECT_TRUE(p.pin_memory);
    EXPECT_EQ(p.reason("cpus"), "its GPU is near NUMA node " + std::to_string(gpu_node[r]) +
                                    ": 16 cores for local ranks " + std::to_string(r / 2 * 2) +
                                    "-" + std::to_string(r / 2 * 2 + 1) +
                                    "; this rank has 8, and 8 spilled");
    EXPECT_NE(p.reason("spill").find("(NUMA node " + std::to_string(spill_node[r]) +
                                     ", hwloc distance 12), for workers only"),
              std::string::npos)
        << p.reason("spill");
  }
  EXPECT_EQ(seen, topo->allowed_cpus);  // every core works for someone
}

TEST(Planner, Power8RankThreeGetsOnlyThePackageOfGpuThree) {
  const std::string xml = STOKER_SHARED_DIR "/topologies/power8gpudistances.xml";
  std::shared_ptr<Topology> topo;
  try {
    topo = std::make_shared<Topology>(load_topology_xml(xml));
  } catch (const Error& e) {
    GTEST_SKIP() << "shared topology absent: " << e.what();
  }
  ASSERT_EQ(topo->gpus.size(), 4u);
  Plan p = make_plan(input_for(*topo, 3, 4, {0, 1, 2, 3}));
  const Package* pkg = nullptr;
  for (const auto& candidate : topo->packages)
    if (candidate.cpus.is_subset_of(numa_cpus(*topo, topo->gpus[3].numa.at(0))) ||
        numa_cpus(*topo, topo->gpus[3].numa.at(0)).is_subset_of(candidate.cpus))
      pkg = &candidate;
  ASSERT_NE(pkg, nullptr);
  EXPECT_FALSE(p.cpus.empty());
  EXPECT_TRUE(p.cpus.is_subset_of(pkg->cpus)) << p.cpus.to_string();
  EXPECT_EQ(p.gpu, topo->gpus[3].pci_bus_id);
  EXPECT_NE(p.reason("cpus"), "");
}

TEST(Planner, GpuOnACorelessNodeFallsBackToTheNearestNodeByDistance) {
  auto topo = fixture(test::gpu_on_memory_only_numa(), "cxl");
  Plan p = make_plan(input_for(*topo, 0, 1, {1}));
  EXPECT_EQ(p.main_cpus, CpuSet::from_list({8}));
  EXPECT_EQ(p.cpus, numa_cpus(*topo, 1) | numa_cpus(*topo, 0));  // node 0 spills to it
  EXPECT_EQ(p.reason("cpus"),
            "its GPU is near NUMA node 2; its node has no allowed cores, so the nearest node with "
            "some, 1 (hwloc distance 12), is used: 8 cores for local rank 0; this rank has 8, and "
            "8 spilled");
  EXPECT_EQ(p.numa, std::vector<int>{2});  // pinned buffers stay next to the GPU
  EXPECT_EQ(p.nics, std::vector<std::string>{"mlx5_0"});
}

TEST(Planner, GpuNodeOutsideTheMaskFallsBackToTheNearestAllowedNode) {
  auto topo = fixture(test::dgx_a100_like(), "dgx-a100");
  // Only nodes 0 and 4 allowed; GPU 2 sits on node 1 (package 0): node 0 is at distance 12.
  CpuSet mask = numa_cpus(*topo, 0) | numa_cpus(*topo, 4);
  Plan p = make_plan(input_for(*topo, 0, 1, {2}, mask));
  EXPECT_TRUE(p.main_cpus.is_subset_of(numa_cpus(*topo, 0)));
  EXPECT_EQ(p.cpus, mask);  // node 4 (distance 32) spills to its workers
  EXPECT_NE(p.reason("cpus").find("nearest node with some, 0 (hwloc distance 12)"),
            std::string::npos);
}

TEST(Planner, RanksWithoutGpuSplitWhatTheGpuRanksLeave) {
  auto topo = fixture(test::four_gpu_two_socket(false), "4gpu");
  PlanInput in = input_for(*topo, 0, 4);
  in.local_gpus = {0, -1, -1, 2};
  std::vector<Plan> plans = plan_all(in);
  // Nothing is left: the two CPU-only ranks borrow one core from each GPU rank.
  EXPECT_EQ(plans[0].cpus, numa_cpus(*topo, 0) - CpuSet::from_list({15}));
  EXPECT_EQ(plans[3].cpus, numa_cpus(*topo, 1) - CpuSet::from_list({31}));
  EXPECT_EQ(plans[1].cpus.count(), 1);
  EXPECT_EQ(plans[2].cpus.count(), 1);
  EXPECT_EQ(plans[1].reason("cpus"),
            "no GPU: an even split of the allowed cores away from the local ranks' GPUs; cores of "
            "NUMA node 0-1 added so that each of its ranks has one: 2 cores for local ranks 1-2; "
            "this rank has 1");
  CpuSet all;
  int total = 0;
  for (const Plan& p : plans) {
    all = all | p.cpus;
    total += p.cpus.count();
  }
  EXPECT_EQ(all.count(), total);  // disjoint
  EXPECT_EQ(plans[1].gpu, "");
  EXPECT_FALSE(plans[1].pin_memory);
}

TEST(Planner, EvenAndNoneBindModes) {
  auto topo = fixture(test::cpu_only_single_numa(16, true), "cpu16");
  PlanInput in = input_for(*topo, 0, 4);
  in.overrides.bind = BindMode::Even;
  std::vector<Plan> plans = plan_all(in);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(plans[r].cpus,
              CpuSet::range(4 * r, 4 * r + 3) | CpuSet::range(4 * r + 16, 4 * r + 19));
    EXPECT_EQ(plans[r].main_cpus, CpuSet::from_list({4 * r, 4 * r + 16}));
    EXPECT_EQ(plans[r].workers, 2);  // round(0.75 x 3)
    EXPECT_EQ(plans[r].bind, BindMode::Even);
  }
  in.overrides.bind = BindMode::None;
  in.local_rank = 1;
  Plan none = make_plan(in);
  EXPECT_EQ(none.cpus, topo->allowed_cpus);
  EXPECT_EQ(none.workers, 2);  // sized on an even share, so 4 ranks do not oversubscribe
  EXPECT_EQ(none.reason("cpus"),
            "bind=none: the whole mask (16 allowed cores), nothing bound; workers sized on 4 "
            "core(s), an even share among 4 local rank(s)");
}

TEST(Planner, SmtAsCoresSplitsSiblings) {
  auto topo = fixture(test::cpu_only_single_numa(4, true), "cpu4");
  PlanInput in = input_for(*topo, 0, 2);
  in.profile.smt_as_cores = true;
  std::vector<Plan> plans = plan_all(in);
  EXPECT_EQ(plans[0].cpus.count(), 4);
  EXPECT_EQ(plans[0].main_cpus.count(), 1);
  EXPECT_EQ(plans[0].workers, 2);  // round(0.75 x 3)
  EXPECT_FALSE(plans[0].cpus.intersects(plans[1].cpus));
}

TEST(Planner, WorkersFollowProfileCapsAndRequests) {
  auto topo = fixture(test::cpu_only_single_numa(32, false), "cpu32");
  PlanInput in = input_for(*topo, 0, 1);
  EXPECT_EQ(make_plan(in).workers, 23);  // round(0.75 x 31)
  EXPECT_EQ(make_plan(in).reason("workers"), "round(0.75 x 31 worker core(s)) = 23");

  in.profile = builtin_profiles().get("netfs");
  Plan netfs = make_plan(in);
  EXPECT_EQ(netfs.workers, 4);
  EXPECT_EQ(netfs.reason("workers"),
            "round(0.5 x 31 worker core(s)) = 16, lowered to MaxReaders=4 for the storage");

  in.profile = builtin_profiles().get("balanced");
  in.caps.max_worker_fraction = 0.5;
  EXPECT_EQ(
      make_plan(in).reason("workers"),
      "round(0.5 x 31 worker core(s)) = 16 (WorkerFraction 0.75 capped by MaxWorkerFraction)");

  in.overrides.workers = 40;
  Plan req = make_plan(in);
  EXPECT_EQ(req.workers, 15);
  EXPECT_EQ(req.reason("workers"),
            "requested 40, capped at 15 (MaxWorkerFraction=0.5 of 31 worker core(s))");
  in.overrides.workers = 3;
  EXPECT_EQ(make_plan(in).workers, 3);
  EXPECT_EQ(make_plan(in).reason("workers"), "requested 3");
}

TEST(Planner, OneCoreMeansOneWorkerSharingIt) {
  auto topo = fixture(test::cpu_only_single_numa(4, false), "cpu4");
  Plan p = make_plan(input_for(*topo, 0, 1, {}, CpuSet::from_list({2})));
  EXPECT_EQ(p.cpus, CpuSet::from_list({2}));
  EXPECT_EQ(p.main_cpus, p.cpus);
  EXPECT_EQ(p.worker_cpus, p.cpus);
  EXPECT_EQ(p.workers, 1);
}

TEST(Planner, PrefetchFromProfileThenBudget) {
  auto topo = fixture(test::cpu_only_single_numa(16, false), "cpu16");
  PlanInput in = input_for(*topo, 0, 1);
  Plan p = make_plan(in);  // 11 workers x 2 = 22 batches of 64 MiB; budget 16 GiB holds 256
  EXPECT_EQ(p.prefetch, 22);
  EXPECT_EQ(p.mem_budget, uint64_t{16} << 30);
  EXPECT_EQ(p.batch_bytes, uint64_t{64} << 20);
  EXPECT_EQ(p.reason("mem_budget"), "0.25 x memory limit 64 GiB = 16 GiB");

  in.batch_bytes_hint = uint64_t{1} << 30;  // 1 GiB batches: the budget holds 16
  p = make_plan(in);
  EXPECT_EQ(p.prefetch, 16);
  EXPECT_EQ(
      p.reason("prefetch"),
      "2 per worker x 11 worker(s) = 22; lowered to 16: the budget holds 16 batch(es) of 1 GiB");

  in.overrides.prefetch = 300;  // over the default cap 256, then over the budget
  EXPECT_EQ(make_plan(in).reason("prefetch"),
            "requested 300, capped at MaxPrefetch=256; lowered to 16: the budget holds 16 "
            "batch(es) of 1 GiB");
}

TEST(Planner, OneBatchOverTheBudgetGivesPrefetchOneAndABudgetOfOneBatch) {
  auto topo = fixture(test::cpu_only_single_numa(4, false), "cpu4");
  PlanInput in = input_for(*topo, 0, 1);
  in.mem_limit = uint64_t{8} << 30;
  in.batch_bytes_hint = uint64_t{3} << 30;  // > 0.25 x 8 GiB
  Plan p = make_plan(in);
  EXPECT_EQ(p.prefetch, 1);
  EXPECT_EQ(p.prefetch_max, 1);
  EXPECT_EQ(p.mem_budget, in.batch_bytes_hint);
  EXPECT_EQ(p.reason("mem_budget"),
            "0.25 x memory limit 8 GiB = 2 GiB, raised to one batch (3 GiB)");
  in.batch_bytes_hint = uint64_t{9} << 30;  // larger than the whole limit
  p = make_plan(in);
  EXPECT_EQ(p.prefetch, 1);
  EXPECT_LE(uint64_t(p.prefetch) * p.batch_bytes, p.mem_budget);
  EXPECT_NE(p.reason("mem_budget").find("expect the job to be killed"), std::string::npos);
}

TEST(Planner, CapsBoundTheProfilesMemShareAndPrefetch) {
  auto topo = fixture(test::cpu_only_single_numa(16, false), "cpu16");
  PlanInput in = input_for(*topo, 0, 1);
  in.profile.mem_share = 0.8;
  in.caps.max_mem_share = 0.5;
  in.caps.max_prefetch = 8;
  Plan p = make_plan(in);
  EXPECT_EQ(p.mem_budget, uint64_t{32} << 30);
  EXPECT_EQ(p.prefetch, 8);
  EXPECT_EQ(p.reason("prefetch"), "2 per worker x 11 worker(s) = 22, lowered to MaxPrefetch=8");
}

TEST(Planner, PinMemoryAutoYesOnlyWithAGpu) {
  auto topo = fixture(test::four_gpu_two_socket(true), "4gpu");
  EXPECT_TRUE(make_plan(input_for(*topo, 0, 1, {0})).pin_memory);
  EXPECT_FALSE(make_plan(input_for(*topo, 0, 1)).pin_memory);
  PlanInput in = input_for(*topo, 0, 1, {0});
  in.overrides.pin_memory = PinMode::No;
  EXPECT_FALSE(make_plan(in).pin_memory);
  EXPECT_EQ(make_plan(in).reason("pin_memory"), "requested no");
  in.overrides.pin_memory = PinMode::Auto;
  in.profile.pin_memory = PinMode::No;
  EXPECT_EQ(make_plan(in).reason("pin_memory"), "profile says PinMemory=no");
}

TEST(Planner, NicsNearTheGpuInfiniBandFirst) {
  auto topo = fixture(test::four_gpu_two_socket(false), "4gpu");
  EXPECT_EQ(make_plan(input_for(*topo, 0, 1, {1})).nics,
            (std::vector<std::string>{"mlx5_0", "eno1"}));
  EXPECT_EQ(make_plan(input_for(*topo, 0, 1, {3})).nics, std::vector<std::string>{"mlx5_1"});
  // No GPU: no NICs (they follow the GPU), so a GPU-less plan needs no PCI discovery.
  const Plan cpu_only = make_plan(input_for(*topo, 0, 1, {}, numa_cpus(*topo, 1)));
  EXPECT_TRUE(cpu_only.nics.empty());
  EXPECT_EQ(cpu_only.reason("nics"), "none: the rank has no GPU (NICs follow the GPU)");
}

TEST(Planner, EqualInputsGiveEqualPlans) {
  auto topo = fixture(test::dgx_a100_like(), "dgx-a100");
  PlanInput in = input_for(*topo, 5, 8, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(make_plan(in), make_plan(in));
  auto again = fixture(test::dgx_a100_like(), "dgx-a100");
  in.topology = again.get();
  EXPECT_EQ(make_plan(in), make_plan(input_for(*topo, 5, 8, {0, 1, 2, 3, 4, 5, 6, 7})));
}

// Bad input a slurmstepd may see: a safe plan and a reason, never a throw.
TEST(Planner, BadInputGivesASafePlanWithAReason) {
  auto topo = fixture(test::cpu_only_single_numa(8, false), "cpu8");
  PlanInput in = input_for(*topo, 0, 2, {}, CpuSet{});
  in.allowed = CpuSet{};
  Plan empty = make_plan(in);
  EXPECT_FALSE(empty.cpus.empty());
  EXPECT_TRUE(empty.cpus.is_subset_of(topo->allowed_cpus));
  EXPECT_EQ(empty.reason("input"),
            "the CPU mask is empty: planned over the node's allowed CPUs 0-7");

  in = input_for(*topo, 4, 4);
  Plan rank = make_plan(in);
  EXPECT_EQ(rank.local_rank, 0);
  EXPECT_EQ(rank.local_size, 1);
  EXPECT_EQ(rank.cpus, topo->allowed_cpus);
  EXPECT_EQ(
      rank.reason("input"),
      "local rank 4 of 4 is impossible: planned as a single rank (0 of 1) over the whole mask");

  in = input_for(*topo, 0, 1);
  in.mem_limit = 0;
  Plan mem = make_plan(in);
  EXPECT_EQ(mem.mem_budget, uint64_t{256} << 20);
  EXPECT_EQ(mem.reason("input"), "the memory limit is unknown (0): 1 GiB assumed");

  in = input_for(*topo, 0, 1, {0});  // a GPU index on a node without GPUs
  Plan gpu = make_plan(in);
  EXPECT_EQ(gpu.gpu, "");
  EXPECT_EQ(
      gpu.reason("gpu"),
      "GPU index 0 is not on this topology (0 GPUs): planned without GPU; no GPU for this rank");

  in = input_for(*topo, 0, 1, {}, CpuSet::parse("6-9"));
  EXPECT_EQ(make_plan(in).cpus, CpuSet::parse("6-7"));
  EXPECT_EQ(make_plan(in).reason("input"), "CPUs 8-9 are not on this node: ignored");

  in = input_for(*topo, 0, 1);
  in.profile.worker_fraction = 2;
  EXPECT_EQ(make_plan(in).reason("profile").rfind("profile 'balanced' is invalid (WorkerFraction=2 "
                                                  "is not in (0,1]): the built-in balanced",
                                                  0),
            0u);

  in.topology = nullptr;
  EXPECT_NO_THROW(make_plan(in));
}

}  // namespace
}  // namespace stoker
