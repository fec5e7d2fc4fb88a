// Which cores each local rank gets: the CPU half of the planner (docs/planner.md, "Planner
// rules"). Pure: every local rank computes the same node-wide assignment from the
// same inputs and keeps its own share, so worker cores never overlap while there are
// at least as many cores as ranks.
#pragma once

#include <string>
#include <vector>

#include "plan/core_units.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker::planner {

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

}  // namespace stoker::planner
