// Every real machine in the shared folder loads, with the facts its README table states.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "stoker/topology/topology.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;

std::string shared_topologies() {
  return std::string(STOKER_SHARED_DIR) + "/topologies";
}

// Loads shared/topologies/<name>, or skips the test when the folder is absent.
#define LOAD_SHARED_OR_SKIP(var, name)                                                 \
  if (!fs::is_directory(shared_topologies()))                                          \
    GTEST_SKIP() << shared_topologies() << " is absent: shared topologies not tested"; \
  Topology var = load_topology_xml(shared_topologies() + "/" + (name))

int count_kind(const Topology& t, const std::string& kind) {
  return static_cast<int>(
      std::count_if(t.nics.begin(), t.nics.end(), [&](const Nic& n) { return n.kind == kind; }));
}

const Nic* nic(const Topology& t, const std::string& name) {
  for (const Nic& n : t.nics)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(SharedTopologies, EveryFileLoadsConsistently) {
  if (!fs::is_directory(shared_topologies()))
    GTEST_SKIP() << shared_topologies() << " is absent: shared topologies not tested";
  int read = 0;
  for (const auto& e : fs::directory_iterator(shared_topologies())) {
    if (e.path().extension() != ".xml") continue;
    SCOPED_TRACE(e.path().string());
    Topology t = load_topology_xml(e.path().string());
    ++read;
    EXPECT_FALSE(t.is_this_system);
    EXPECT_FALSE(t.numa_nodes.empty());
    EXPECT_FALSE(t.cores.empty());
    EXPECT_TRUE(t.allowed_cpus.is_subset_of(t.all_cpus));
    EXPECT_TRUE(t.all_cpus.is_subset_of(t.complete_cpus));
    CpuSet from_cores, from_nodes;
    for (const Core& c : t.cores) {
      EXPECT_FALSE(c.pus.empty());
      EXPECT_FALSE(from_cores.intersects(c.pus)) << "a PU in two cores";
      from_cores = from_cores | c.pus;
    }
    for (const NumaNode& n : t.numa_nodes) {
      EXPECT_FALSE(from_nodes.intersects(n.cpus)) << "a PU in two NUMA nodes";
      from_nodes = from_nodes | n.cpus;
    }
    EXPECT_EQ(from_cores, t.all_cpus);
    // A core belongs to its NUMA node's CPUs, or to none when hwloc has no node for it
    // (16amd64-8n2c-cpusets: the nodes of packages 0, 4, 5 were outside the cpuset).
    for (const Core& c : t.cores) {
      const NumaNode* n = t.numa_by_os_index(c.numa);
      if (n) {
        EXPECT_TRUE(c.pus.is_subset_of(n->cpus)) << c.pus.to_string();
      } else {
        EXPECT_EQ(c.numa, -1);
        EXPECT_FALSE(c.pus.intersects(from_nodes)) << c.pus.to_string();
      }
    }
    EXPECT_TRUE(std::is_sorted(t.gpus.begin(), t.gpus.end(), [](const Gpu& a, const Gpu& b) {
      return a.pci_bus_id < b.pci_bus_id;
    }));
    for (const Gpu& g : t.gpus) {
      EXPECT_EQ(g.vendor, 0x10de);
      EXPECT_FALSE(g.numa.empty()) << g.pci_bus_id;
    }
    if (!t.numa_distances.empty()) {
      EXPECT_EQ(t.numa_distances.size(), t.numa_nodes.size());
      for (const NumaNode& n : t.numa_nodes) EXPECT_GT(t.numa_distance(n.os_index, n.os_index), 0);
    }
  }
  std::printf("read %d shared topologies from %s\n", read, shared_topologies().c_str());
  EXPECT_GE(read, 9);
}

TEST(SharedTopologies, Power8GpusTwoPerPackage) {
  LOAD_SHARED_OR_SKIP(t, "power8gpudistances.xml");
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  ASSERT_EQ(t.packages.size(), 2u);
  ASSERT_EQ(t.gpus.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const Gpu& g = t.gpus[i];
    auto has = [&](const std::string& n) {
      return std::find(g.os_names.begin(), g.os_names.end(), n) != g.os_names.end();
    };
    EXPECT_TRUE(has("cuda" + std::to_string(i)) && has("nvml" + std::to_string(i))) << i;
    EXPECT_EQ(g.numa, std::vector<int>{i / 2}) << i;
    EXPECT_TRUE(g.local_cpus.is_subset_of(t.packages[i / 2].cpus)) << i;
  }
  EXPECT_EQ(t.gpus[3].pci_bus_id, "000b:01:00.0");
  EXPECT_EQ(t.smt_width(), 2);
  EXPECT_EQ(t.numa_distance(0, 1), 40);
  EXPECT_EQ(t.numa_distance(1, 1), 10);
}

TEST(SharedTopologies, Dgx2SixteenGpus) {
  LOAD_SHARED_OR_SKIP(t, "nvidiaDGX2.xml");
  ASSERT_EQ(t.gpus.size(), 16u);  // the NVSwitches (also vendor 0x10de) are not GPUs
  EXPECT_EQ(t.gpus[15].os_names, std::vector<std::string>{"nvml15"});
  for (int i = 0; i < 16; ++i) EXPECT_EQ(t.gpus[i].numa, std::vector<int>{i / 8}) << i;
  EXPECT_EQ(t.all_cpus.count(), 4);
}

TEST(SharedTopologies, NormalIoCudaGpuAndInfinibandHca) {
  LOAD_SHARED_OR_SKIP(t, "32em64t-2n8c2t-pci-normalio.xml");
  EXPECT_EQ(t.smt_width(), 2);
  EXPECT_EQ(t.cores.size(), 16u);
  // Three NVIDIA 3D controllers by PCI; one has a CUDA device (cuda0), the one the README names.
  ASSERT_EQ(t.gpus.size(), 3u);
  const Gpu& cuda = t.gpus[2];
  EXPECT_EQ(cuda.pci_bus_id, "0000:84:00.0");
  EXPECT_EQ(cuda.os_names[0], "cuda0");
  EXPECT_EQ(cuda.numa, std::vector<int>{1});
  const Nic* hca = nic(t, "mlx5_0");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->kind, "infiniband");
  EXPECT_EQ(hca->numa, std::vector<int>{1});
  ASSERT_NE(nic(t, "ib0"), nullptr);
  EXPECT_EQ(nic(t, "ib0")->kind, "infiniband");
  EXPECT_EQ(nic(t, "eth0")->kind, "ethernet");
}

TEST(SharedTopologies, IbNicLocality) {
  LOAD_SHARED_OR_SKIP(t, "24em64t-2n6c2t-pci.xml");
  const Nic* hca = nic(t, "mlx4_0");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->kind, "infiniband");
  EXPECT_EQ(hca->numa, std::vector<int>{0});
  EXPECT_EQ(hca->local_cpus, t.numa_by_os_index(0)->cpus);
  EXPECT_EQ(count_kind(t, "ethernet"), 3);
}

TEST(SharedTopologies, DisplayCardIsNotAComputeGpu) {
  LOAD_SHARED_OR_SKIP(t, "96em64t-4n4d3ca2co-pci.xml");
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_GE(count_kind(t, "ethernet"), 8);
  EXPECT_EQ(t.numa_nodes.size(), 4u);
  EXPECT_EQ(t.all_cpus.count(), 96);
}

TEST(SharedTopologies, ManyNumaNodesWithDistances) {
  LOAD_SHARED_OR_SKIP(t, "192em64t-24n8c2t.xml");
  EXPECT_EQ(t.numa_nodes.size(), 24u);
  EXPECT_EQ(t.all_cpus.count(), 384);
  EXPECT_EQ(t.smt_width(), 2);
  ASSERT_EQ(t.numa_distances.size(), 24u);
  ASSERT_NE(nic(t, "mlx4_0"), nullptr);
  EXPECT_EQ(nic(t, "mlx4_0")->kind, "infiniband");
}

TEST(SharedTopologies, KnlMemoryOnlyNodes) {
  LOAD_SHARED_OR_SKIP(t, "64intel64-fakeKNL-SNC4-hybrid.xml");
  ASSERT_EQ(t.numa_nodes.size(), 8u);
  int memory_only = 0;
  for (const NumaNode& n : t.numa_nodes) {
    if (n.cpus.empty()) {
      ++memory_only;
      EXPECT_EQ(n.subtype, "MCDRAM");
    }
  }
  EXPECT_EQ(memory_only, 4);
  EXPECT_EQ(t.smt_width(), 4);
}

TEST(SharedTopologies, CpusetsRestrictTheMachine) {
  LOAD_SHARED_OR_SKIP(t, "16amd64-8n2c-cpusets.xml");
  // Captured inside a cpuset: 10 of the machine's 16 PUs are visible and allowed.
  EXPECT_EQ(t.complete_cpus.count(), 16);
  EXPECT_EQ(t.allowed_cpus, CpuSet::parse("0-3,5-6,12-15"));
  EXPECT_LT(t.allowed_cpus.count(), t.complete_cpus.count());
  // Nodes 4 and 5 are allowed but none of their CPUs are: they come out CPU-less. PUs 0-1 and
  // 12-15 are allowed but their NUMA nodes are not: their cores have no NUMA node.
  ASSERT_NE(t.numa_by_os_index(4), nullptr);
  EXPECT_TRUE(t.numa_by_os_index(4)->cpus.empty());
  EXPECT_EQ(t.numa_by_os_index(0), nullptr);
  EXPECT_EQ(t.cores[0].pus, CpuSet::from_list({0}));
  EXPECT_EQ(t.cores[0].numa, -1);
}

TEST(SharedTopologies, OfflinePus) {
  LOAD_SHARED_OR_SKIP(t, "16em64t-4s2c2t-offlines.xml");
  EXPECT_EQ(t.packages.size(), 4u);
  EXPECT_LT(t.all_cpus.count(), t.complete_cpus.count());
  EXPECT_EQ(t.smt_width(), 2);
}

}  // namespace
}  // namespace stoker
