// Plan quality as properties of the whole node: every local rank of every fixture (the
// generated ones and every XML of the shared topologies) is planned for 1, 2, 4, 8 and 16
// ranks with the whole node granted, each rank on GPU r % GPUs (PyTorch's LOCAL_RANK rule),
// and the node's plans together must hold:
//   - worker sets disjoint unless there are fewer cores than ranks;
//   - every allowed core in some rank's plan, unless the profile says SpillCores=no;
//   - each rank's main core on its GPU's NUMA node when that node has an allowed core;
//   - memory bound where the main core is (a GPU whose node has no allowed core keeps its
//     memory next to the GPU: the main core is then on the nearest node with cores);
//   - the NICs on the GPU's side: its node's when it has some, else its package's.
// It prints the table fixture x ranks -> cores used / granted, ranks off their GPU's node.
#include <gtest/gtest.h>

#include <map>

#include "plan/core_assignment.hpp"
#include "plan_fixture.hpp"

namespace stoker {
namespace {

const int kSizes[] = {1, 2, 4, 8, 16};

bool has(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<int> nic_nodes(const Topology& topo, const Nic& nic) {
  if (!nic.numa.empty()) return nic.numa;
  std::vector<int> out;
  for (const NumaNode& n : topo.numa_nodes)
    if (n.cpus.intersects(nic.local_cpus)) out.push_back(n.os_index);
  return out;
}

int package_of(const Topology& topo, int node) {
  const NumaNode* n = topo.numa_by_os_index(node);
  return n ? n->package : -1;
}

// The NICs of the GPU's side: on one of `home`'s nodes, else in one of their packages.
std::vector<std::string> gpu_side_nics(const Topology& topo, const std::vector<int>& home) {
  for (bool same_node : {true, false}) {
    std::vector<std::string> out;
    for (const Nic& nic : topo.nics)
      for (int n : nic_nodes(topo, nic)) {
        bool near = false;
        for (int h : home)
          near = near || (same_node ? h == n
                                    : package_of(topo, h) >= 0 &&
                                          package_of(topo, h) == package_of(topo, n));
        if (near && std::find(out.begin(), out.end(), nic.name) == out.end())
          out.push_back(nic.name);
      }
    if (!out.empty()) return out;
  }
  return {};
}

struct Row {
  int used = 0, granted = 0, off_gpu_node = 0, min_worker_cores = 1 << 30;
};

using Units = std::vector<planner::Unit>;

std::vector<int> unit_nodes(const Units& units, const CpuSet& cpus) {
  std::vector<int> out;
  for (const auto& u : units)
    if (u.pus.intersects(cpus) && !has(out, u.numa)) out.push_back(u.numa);
  return out;
}
int unit_count(const Units& units, const CpuSet& cpus) {
  int n = 0;
  for (const auto& u : units) n += u.pus.intersects(cpus) ? 1 : 0;
  return n;
}

// Plans every rank of `topo` at `size` ranks per node and checks the node's properties.
Row check_node(const std::string& name, const Topology& topo, int size, const Profile& profile) {
  PlanInput in = test::input_for(topo, 0, size);
  in.profile = profile;
  for (int r = 0; r < size && !topo.gpus.empty(); ++r)
    in.local_gpus.push_back(r % static_cast<int>(topo.gpus.size()));
  const Units units = planner::make_units(topo, in.allowed, profile.smt_as_cores);
  // SpillCores=no: a GPU's ranks use its node alone, and share it when it is short.
  std::map<std::vector<int>, int> ranks_on;
  for (int g : in.local_gpus) ++ranks_on[planner::gpu_numa_nodes(topo, g)];
  bool short_node = false;
  for (const auto& [home, n] : ranks_on) {
    int cores = 0;
    for (const auto& u : units) cores += has(home, u.numa) ? 1 : 0;
    short_node = short_node || (!home.empty() && cores < n);
  }
  const bool disjoint =
      static_cast<int>(units.size()) >= size && (profile.spill_cores || !short_node);
  Row row;
  row.granted = static_cast<int>(units.size());
  CpuSet used, workers_seen;
  for (int r = 0; r < size; ++r) {
    in.local_rank = r;
    const Plan p = make_plan(in);
    SCOPED_TRACE(name + " at " + std::to_string(size) + " ranks, rank " + std::to_string(r) +
                 ": cpus " + p.cpus.to_string() + " main " + p.main_cpus.to_string() + " workers " +
                 p.worker_cpus.to_string() + "; " + p.reason("cpus"));
    EXPECT_FALSE(p.main_cpus.empty());
    EXPECT_FALSE(p.worker_cpus.empty());
    used = used | p.cpus;
    if (disjoint) {
      EXPECT_FALSE(p.worker_cpus.intersects(workers_seen))
          << "worker cores shared with an earlier rank: "
          << (p.worker_cpus & workers_seen).to_string();
    }
    workers_seen = workers_seen | p.worker_cpus;
    row.min_worker_cores = std::min(row.min_worker_cores, unit_count(units, p.worker_cpus));

    const int gpu = in.local_gpus.empty() ? -1 : in.local_gpus[r];
    const std::vector<int> home = planner::gpu_numa_nodes(topo, gpu);
    const std::vector<int> main_nodes = unit_nodes(units, p.main_cpus);
    bool home_has_cores = false;
    for (const auto& u : units) home_has_cores = home_has_cores || has(home, u.numa);
    bool main_home = !main_nodes.empty();
    for (int n : main_nodes) main_home = main_home && has(home, n);
    if (gpu >= 0 && !main_home) ++row.off_gpu_node;
    if (home_has_cores) {
      EXPECT_TRUE(main_home) << "main core off the GPU's NUMA node "
                             << CpuSet::from_list(home).to_string();
    }
    if (!home.empty()) {
      EXPECT_EQ(p.numa, home) << "memory not on the GPU's NUMA node";
    } else {
      for (int n : main_nodes) {
        if (n >= 0) {
          EXPECT_TRUE(has(p.numa, n)) << "memory not where the main core is";
        }
      }
    }
    if (gpu >= 0 && !home.empty()) {
      const std::vector<std::string> side = gpu_side_nics(topo, home);
      if (!side.empty()) {  // else the nearest ones, wherever they are
        EXPECT_FALSE(p.nics.empty()) << "no NIC, though one is on the GPU's side";
        for (const std::string& nic : p.nics) {
          EXPECT_TRUE(std::find(side.begin(), side.end(), nic) != side.end())
              << nic << " is not on the GPU's side";
        }
      }
    }
  }
  row.used = unit_count(units, used);
  if (profile.spill_cores) {
    EXPECT_EQ(row.used, row.granted) << name << " at " << size << " ranks: cores idle";
  }
  return row;
}

void print_table(const std::string& title, const std::map<std::string, std::map<int, Row>>& t) {
  std::printf(
      "\n%s\ncores used/granted (ranks off their GPU's NUMA node) [fewest worker cores "
      "of a rank]\n%-34s",
      title.c_str(), "fixture");
  for (int s : kSizes) std::printf("  %-18s", (std::to_string(s) + " rank(s)").c_str());
  std::printf("\n");
  for (const auto& [name, sizes] : t) {
    std::printf("%-34s", name.c_str());
    for (int s : kSizes) {
      const Row& r = sizes.at(s);
      const std::string cell = std::to_string(r.used) + "/" + std::to_string(r.granted) + " (" +
                               std::to_string(r.off_gpu_node) + ") [" +
                               std::to_string(r.min_worker_cores) + "]";
      std::printf("  %-18s", cell.c_str());
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

TEST(PlannerWholeNode, EveryFixtureEveryRankCount) {
  std::map<std::string, std::map<int, Row>> table;
  const Profile balanced = builtin_profiles().get("balanced");
  for (const test::NamedTopology& t : test::all_topologies())
    for (int size : kSizes) table[t.name][size] = check_node(t.name, *t.topo, size, balanced);
  print_table("whole node, profile balanced", table);
}

// The same properties where the profile keeps the GPU-less nodes idle (nlp: SpillCores=no),
// less "every core used"; the table shows what it leaves.
TEST(PlannerWholeNode, SpillCoresNoKeepsTheOtherProperties) {
  std::map<std::string, std::map<int, Row>> table;
  const Profile nlp = builtin_profiles().get("nlp");
  ASSERT_FALSE(nlp.spill_cores);
  for (const test::NamedTopology& t : test::all_topologies())
    for (int size : kSizes) table[t.name][size] = check_node(t.name, *t.topo, size, nlp);
  print_table("whole node, profile nlp (SpillCores=no)", table);
}

}  // namespace
}  // namespace stoker
