// Which cores each local rank gets: the CPU half of the planner (README "Planner
// rules"). Pure: every local rank computes the same node-wide assignment from the
// same inputs and keeps its own share, so worker cores never overlap while there are
// at least as many cores as ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::planner {

// A unit of CPU the planner hands out whole: a core's allowed PUs (SMT siblings
// together), or one PU when SMT siblings count as cores.
struct Unit {
  CpuSet pus;
  int numa = -1;  // os_index of its NUMA node, -1 when unknown
};

// The allowed units in topology order (package, NUMA node, core).
std::vector<Unit> make_units(const Topology& topo, const CpuSet& allowed, bool smt_as_cores);

struct RankCores {
  // This rank's units: first the `home_units` of its own node (its GPU's, the fallback's, or,
  // for a rank without GPU, its share), which the training loop takes its main cores from,
  // then worker-only units from other nodes (borrowed, then spilled).
  std::vector<Unit> units;
  int home_units = 0;
  int share_units = 0;         // units this rank may size its workers on (bind=none: an even share)
  std::vector<int> gpu_nodes;  // NUMA nodes of its GPU (os_index), empty without GPU
  std::string reason;          // one line for "cpus"
  std::string spill;           // one line for "spill": the spilled cores, or why none; "" = none
};

// `gpus`: the topology GPU index of every local rank (-1: none); size local_size. `spill`:
// the profile's SpillCores (cores on nodes without a rank's GPU become worker cores).
RankCores assign_cores(const Topology& topo, const std::vector<Unit>& units, int local_rank,
                       int local_size, const std::vector<int>& gpus, BindMode bind, bool spill);

// The NUMA nodes of a GPU: its own list, else the nodes holding its local CPUs.
std::vector<int> gpu_numa_nodes(const Topology& topo, int gpu);

inline bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Helpers over units (`list`: indexes into `units`) and their reasons' text.
CpuSet pus_of(const std::vector<Unit>& units, const std::vector<int>& list);
std::vector<int> unit_nodes(const std::vector<Unit>& units, const std::vector<int>& list);
std::string list_text(const std::vector<int>& v);       // "0-3,8"; "?" when none is known
std::string plural(size_t n, const std::string& word);  // "1 core", "2 cores"

// How far `node` is from a rank's home nodes, for sorting (smaller is nearer): hwloc
// distance when known, else "same package" before "other package"; ties by node number.
// Home nodes first; without home nodes every node is as near as any other.
using NodeKey = std::tuple<int64_t, int, int>;
NodeKey node_key(const Topology& topo, const std::vector<int>& home, int node);

}  // namespace stoker::planner
