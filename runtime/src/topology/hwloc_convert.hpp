// Private: turns a loaded hwloc topology into stoker's plain Topology data, once,
// so that later queries (the planner, `stoker topo`) never call hwloc again.
#pragma once

#include <hwloc.h>

#include "stoker/common/cpuset.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::detail {

// hwloc bitmap -> CpuSet (OS indices). An infinite bitmap keeps only its finite part.
CpuSet to_cpuset(hwloc_const_bitmap_t bitmap);
// CpuSet -> newly allocated hwloc bitmap; the caller frees it with hwloc_bitmap_free.
hwloc_bitmap_t to_hwloc_bitmap(const CpuSet& cpus);

// Fills every field of Topology except `source`, `is_this_system` and `hwloc`.
Topology convert_topology(hwloc_topology_t topo);

}  // namespace stoker::detail
