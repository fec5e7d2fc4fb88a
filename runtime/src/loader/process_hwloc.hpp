// The loader's process-wide hwloc topology (no I/O devices), loaded once on first use:
// for binding the batch arena's memory and for asking which CPUs the process may use.
#pragma once

#include <hwloc.h>

#include "stoker/cpuset.hpp"

namespace stoker {

// Null when hwloc cannot load a topology.
hwloc_topology_t process_hwloc();

// The CPUs this process may run on: hwloc's allowed set (cgroup cpuset), which a thread
// may bind to even when the calling thread's own affinity is narrower (a training loop
// bound to its main CPUs). Falls back to the calling thread's mask without hwloc.
CpuSet process_allowed_cpus();

}  // namespace stoker
