// Which cores each local rank gets: the CPU half of the planner (README "Planner
// rules"). Pure: every local rank computes the same node-wide assignment from the
// same inputs and keeps its own share, so shares never overlap while there are at
// least as many cores as ranks.
#pragma once

#include <string>
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
  std::vector<Unit> units;     // this rank's units, in the order main then workers take them
  int share_units = 0;         // units this rank may size its workers on (bind=none: an even share)
  std::vector<int> gpu_nodes;  // NUMA nodes of its GPU (os_index), empty without GPU
  std::string reason;          // one line for "cpus"
};

// `gpus`: the topology GPU index of every local rank (-1: none); size local_size.
RankCores assign_cores(const Topology& topo, const std::vector<Unit>& units, int local_rank,
                       int local_size, const std::vector<int>& gpus, BindMode bind);

// The NUMA nodes of a GPU: its own list, else the nodes holding its local CPUs.
std::vector<int> gpu_numa_nodes(const Topology& topo, int gpu);

}  // namespace stoker::planner
