// The planner's units of CPU and how near a NUMA node is: the vocabulary the core
// assignment (core_assignment.hpp) and the spill (core_spill.hpp) share. Implemented by
// core_units.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "stoker/common/cpuset.hpp"
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
