// Binding on this machine (real hwloc, real sched_getaffinity) and the refusals.
#include <gtest/gtest.h>

#include <thread>

#include "enum_names_check.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

TEST(Binding, ThreadBindsToOneAllowedCpu) {
  CpuSet mask = current_cpu_mask();
  if (mask.count() < 2)
    GTEST_SKIP() << "needs 2 allowed CPUs, this process has " << mask.to_string();
  int target = mask.list()[1];
  std::string why;
  CpuSet seen;
  bool ok = false;
  std::thread worker([&] {
    ok = bind_this_thread(CpuSet::from_list({target}), &why);
    seen = current_cpu_mask();
  });
  worker.join();
  ASSERT_TRUE(ok) << why;
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(seen, CpuSet::from_list({target}));
  EXPECT_EQ(current_cpu_mask(), mask) << "binding a worker thread must not move the caller";
}

TEST(Binding, ThreadRefusesEmptyAndForeignCpus) {
  std::string why;
  EXPECT_FALSE(bind_this_thread(CpuSet(), &why));
  EXPECT_NE(why.find("no CPUs"), std::string::npos);
  std::thread worker([&] { EXPECT_FALSE(bind_this_thread(CpuSet::from_list({60000}), &why)); });
  worker.join();
  EXPECT_NE(why.find("60000"), std::string::npos) << why;
}

TEST(Binding, ThreadsBindConcurrently) {
  CpuSet mask = current_cpu_mask();
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      int cpu = mask.list()[static_cast<size_t>(i) % mask.list().size()];
      ok[i] =
          bind_this_thread(CpuSet::from_list({cpu}), nullptr) && current_cpu_mask().count() == 1;
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(ok[i]) << i;
}

TEST(Binding, ProcessBindingSkipsForeignTopologies) {
  Topology t = load_topology_xml_text(test::four_gpu_two_socket(false), "fixture.xml");
  BindResult r = bind_this_process(t, CpuSet::from_list({0}), {0}, MemBind::Local);
  EXPECT_FALSE(r.cpus_bound);
  EXPECT_FALSE(r.memory_bound);
  EXPECT_EQ(r.reason, "topology is fixture.xml, not this machine: binding skipped");
}

TEST(Binding, ProcessBindingOnThisMachine) {
  Topology live = load_topology();
  ASSERT_TRUE(live.is_this_system);
  CpuSet before = current_cpu_mask();
  // Binds this test process, checks, then restores the original mask.
  BindResult r = bind_this_process(live, before, {live.numa_nodes[0].os_index}, MemBind::Local);
  EXPECT_TRUE(r.cpus_bound) << r.reason;
  std::printf("memory binding to NUMA %d: %s\n", live.numa_nodes[0].os_index,
              r.memory_bound ? "done" : r.reason.c_str());
  // Containers may forbid set_mempolicy; then the refusal must say why.
  EXPECT_EQ(r.memory_bound, r.reason.empty()) << r.reason;
  EXPECT_EQ(current_cpu_mask(), before);
  BindResult narrow =
      bind_this_process(live, CpuSet::from_list({before.first()}), {}, MemBind::Local);
  EXPECT_TRUE(narrow.cpus_bound) << narrow.reason;
  EXPECT_FALSE(narrow.memory_bound);
  EXPECT_EQ(current_cpu_mask(), CpuSet::from_list({before.first()}));
  EXPECT_TRUE(bind_this_process(live, before, {}, MemBind::Local).cpus_bound);
  EXPECT_EQ(current_cpu_mask(), before);
  BindResult none = bind_this_process(live, CpuSet(), {}, MemBind::Local);
  EXPECT_FALSE(none.cpus_bound);
  EXPECT_NE(none.reason.find("no CPUs"), std::string::npos);
}

TEST(LiveTopology, LoadsThisMachine) {
  Topology t = load_topology();
  EXPECT_EQ(t.source, "this machine");
  EXPECT_TRUE(t.is_this_system);
  EXPECT_NE(t.hwloc, nullptr);
  EXPECT_FALSE(t.cores.empty());
  EXPECT_FALSE(t.numa_nodes.empty());
  EXPECT_TRUE(current_cpu_mask().is_subset_of(t.all_cpus));
  EXPECT_GT(t.total_memory, 0u);
}

TEST(MemBind, NamesReadBothWays) {
  expect_names_round_trip(
      kMemBindNames, [](MemBind m) { return to_string(m); }, parse_mem_bind);
  EXPECT_EQ(names_of(kMemBindNames), "local, strict or none");
}

}  // namespace
}  // namespace stoker
