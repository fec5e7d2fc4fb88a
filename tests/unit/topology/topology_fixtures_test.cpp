// The generated fixtures load in hwloc 2.9 and come out with the layout their comments promise
// (the planner's tests rely on these facts).
#include <gtest/gtest.h>

#include "stoker/topology/topology.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

using test::kGiB;

std::vector<int> numa_of_gpus(const Topology& t) {
  std::vector<int> v;
  for (const Gpu& g : t.gpus) {
    EXPECT_EQ(g.numa.size(), 1u) << g.pci_bus_id;
    v.push_back(g.numa.empty() ? -1 : g.numa[0]);
  }
  return v;
}

TEST(Fixtures, DgxA100LikeLayout) {
  Topology t = load_topology_xml_text(test::dgx_a100_like(), "dgx");
  EXPECT_EQ(t.source, "dgx");
  EXPECT_FALSE(t.is_this_system);
  ASSERT_EQ(t.packages.size(), 2u);
  ASSERT_EQ(t.numa_nodes.size(), 8u);
  ASSERT_EQ(t.cores.size(), 128u);
  EXPECT_EQ(t.smt_width(), 2);
  EXPECT_EQ(t.all_cpus, CpuSet::range(0, 255));
  EXPECT_EQ(t.allowed_cpus, t.all_cpus);
  EXPECT_EQ(t.total_memory, 8 * 128 * kGiB);
  for (int k = 0; k < 8; ++k) {
    const NumaNode& n = t.numa_nodes[k];
    EXPECT_EQ(n.os_index, k);
    EXPECT_EQ(n.package, k / 4);
    EXPECT_EQ(n.memory_bytes, 128 * kGiB);
    EXPECT_EQ(n.cpus,
              CpuSet::range(16 * k, 16 * k + 15) | CpuSet::range(128 + 16 * k, 143 + 16 * k));
  }
  EXPECT_EQ(t.cores[5].pus, CpuSet::from_list({5, 133}));
  EXPECT_EQ(t.cores[5].numa, 0);
  EXPECT_EQ(t.cores[127].package, 1);
  EXPECT_EQ(numa_of_gpus(t), (std::vector<int>{3, 3, 1, 1, 7, 7, 5, 5}));
  EXPECT_EQ(t.gpus[0].pci_bus_id, "0000:07:00.0");
  EXPECT_EQ(t.gpus[7].pci_bus_id, "0000:bd:00.0");
  EXPECT_EQ(t.gpus[2].os_names, (std::vector<std::string>{"cuda2", "nvml2"}));
  EXPECT_EQ(t.gpus[2].local_cpus, t.numa_nodes[1].cpus);
  ASSERT_EQ(t.nics.size(), 4u);
  const std::pair<const char*, int> hcas[] = {
      {"mlx5_0", 3}, {"mlx5_1", 1}, {"mlx5_2", 7}, {"mlx5_3", 5}};
  for (const auto& [name, numa] : hcas) {
    auto it =
        std::find_if(t.nics.begin(), t.nics.end(), [&](const Nic& n) { return n.name == name; });
    ASSERT_NE(it, t.nics.end()) << name;
    EXPECT_EQ(it->kind, "infiniband");
    EXPECT_EQ(it->numa, std::vector<int>{numa});
  }
  EXPECT_EQ(t.numa_distance(3, 3), 10);
  EXPECT_EQ(t.numa_distance(3, 1), 12);
  EXPECT_EQ(t.numa_distance(3, 5), 32);
  EXPECT_EQ(t.numa_distance(3, 9), -1);
}

TEST(Fixtures, FourGpuTwoSocketSmtOnAndOff) {
  for (bool smt : {true, false}) {
    SCOPED_TRACE(smt ? "smt" : "no smt");
    Topology t = load_topology_xml_text(test::four_gpu_two_socket(smt));
    ASSERT_EQ(t.numa_nodes.size(), 2u);
    EXPECT_EQ(t.cores.size(), 32u);
    EXPECT_EQ(t.smt_width(), smt ? 2 : 1);
    EXPECT_EQ(t.all_cpus.count(), smt ? 64 : 32);
    CpuSet node1 = CpuSet::range(16, 31);
    if (smt) node1 = node1 | CpuSet::range(48, 63);
    EXPECT_EQ(t.numa_nodes[1].cpus, node1);
    EXPECT_EQ(numa_of_gpus(t), (std::vector<int>{0, 0, 1, 1}));
    ASSERT_EQ(t.nics.size(), 3u);
    EXPECT_EQ(t.nics[0].name, "eno1");
    EXPECT_EQ(t.nics[0].kind, "ethernet");
    EXPECT_EQ(t.nics[0].pci_bus_id, "0000:04:00.0");
    EXPECT_EQ(t.numa_distance(0, 1), 32);
  }
}

TEST(Fixtures, CpuOnlySingleNuma) {
  Topology t = load_topology_xml_text(test::cpu_only_single_numa(6, true));
  ASSERT_EQ(t.numa_nodes.size(), 1u);
  EXPECT_EQ(t.cores.size(), 6u);
  EXPECT_EQ(t.cores[0].pus, CpuSet::from_list({0, 6}));
  EXPECT_EQ(t.numa_nodes[0].cpus, CpuSet::range(0, 11));
  EXPECT_EQ(t.numa_nodes[0].memory_bytes, 32 * kGiB);
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_TRUE(t.nics.empty());
  EXPECT_TRUE(t.numa_distances.empty());
  EXPECT_EQ(t.numa_distance(0, 0), -1);
  EXPECT_EQ(load_topology_xml_text(test::cpu_only_single_numa(3, false)).all_cpus,
            CpuSet::range(0, 2));
}

TEST(Fixtures, GpuOnMemoryOnlyNode) {
  Topology t = load_topology_xml_text(test::gpu_on_memory_only_numa());
  ASSERT_EQ(t.numa_nodes.size(), 3u);
  EXPECT_EQ(t.numa_nodes[0].cpus, CpuSet::range(0, 7));
  EXPECT_EQ(t.numa_nodes[1].cpus, CpuSet::range(8, 15));
  EXPECT_TRUE(t.numa_nodes[2].cpus.empty());
  EXPECT_EQ(t.numa_nodes[2].memory_bytes, 256 * kGiB);
  EXPECT_EQ(t.numa_nodes[2].package, 1);
  EXPECT_EQ(numa_of_gpus(t), (std::vector<int>{0, 2}));
  EXPECT_TRUE(t.gpus[1].local_cpus.empty());
  EXPECT_EQ(t.numa_distance(2, 1), 12);
  EXPECT_EQ(t.numa_distance(2, 0), 32);
  ASSERT_EQ(t.nics.size(), 1u);
  EXPECT_EQ(t.nics[0].numa, std::vector<int>{2});
}

TEST(Fixtures, DisallowedPusStayInTheTopology) {
  test::FixtureSpec s;
  s.packages.resize(1);
  s.packages[0].nodes.push_back({0, 4, 8 * kGiB, "", {}});
  s.disallowed_pus = {0, 1};
  Topology t = load_topology_xml_text(test::build_fixture_xml(s));
  EXPECT_EQ(t.all_cpus, CpuSet::range(0, 3));
  EXPECT_EQ(t.allowed_cpus, CpuSet::range(2, 3));
  EXPECT_EQ(t.numa_nodes[0].cpus, CpuSet::range(0, 3));
}

TEST(Fixtures, SubtypedNodeNextToDramIsMemoryOnly) {
  // KNL-style: DDR and MCDRAM share a package; the cores belong to the DDR node.
  test::FixtureSpec s;
  s.packages.resize(1);
  s.packages[0].nodes.push_back({0, 4, 16 * kGiB, "", {}});
  s.packages[0].nodes.push_back({1, 0, 4 * kGiB, "MCDRAM", {}});
  Topology t = load_topology_xml_text(test::build_fixture_xml(s));
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[1].subtype, "MCDRAM");
  EXPECT_TRUE(t.numa_nodes[1].cpus.empty());
  EXPECT_EQ(t.numa_nodes[0].cpus, CpuSet::range(0, 3));
}

}  // namespace
}  // namespace stoker
