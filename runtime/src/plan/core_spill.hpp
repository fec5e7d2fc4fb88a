// The spill: allowed cores on NUMA nodes where none of the step's ranks has its GPU would
// run nothing under a GPU-node-only plan. They are shared out as worker cores to the ranks
// nearest them (hwloc distance when the topology has one, else the same package first), so
// that every granted core works for someone, while each rank's training loop, memory and
// pinned arena stay on its GPU's node. Pure: every local rank computes the same split.
#pragma once

#include <string>
#include <vector>

#include "plan/core_units.hpp"

namespace stoker::planner {

// A rank that may take spilled cores: its GPU's NUMA nodes and the units it has so far.
struct SpillTaker {
  int rank = 0;
  std::vector<int> home;
  int have = 0;
};

// Which of the `free` units (indexes into `units`) each taker gets, in the takers' order.
// Each free unit goes to the takers nearest its node; among them the cores of a node are
// dealt so that the takers' totals end as even as they can (fewest first, then the lowest
// rank), and each taker gets a contiguous run of them (cores that share a cache stay together).
std::vector<std::vector<int>> spill_units(const Topology& topo, const std::vector<Unit>& units,
                                          const std::vector<int>& free,
                                          const std::vector<SpillTaker>& takers);

// How far the nearest taker is from `node`, in words: "hwloc distance 12", "same package",
// "another package".
std::string spill_nearness(const Topology& topo, const std::vector<int>& home, int node);

// The "spill" reason of a rank with a GPU on the nodes `home`: `mine` the units it was given,
// `spilled` every spilled unit of the node, `idle` the units SpillCores=no leaves to nobody.
// "" when no unit is left to spill.
std::string spill_reason(const Topology& topo, const std::vector<Unit>& units,
                         const std::vector<int>& mine, const std::vector<int>& home,
                         const std::vector<int>& spilled, const std::vector<int>& idle);

}  // namespace stoker::planner
