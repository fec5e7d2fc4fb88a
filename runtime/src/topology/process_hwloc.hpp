// Private: the process-wide hwloc topology (CPUs and memory, no I/O devices), loaded
// once on first use. Thread binding and the loader's NUMA-local batch arena share it.
#pragma once

#include <hwloc.h>

#include <string>

#include "stoker/plan/cpuset.hpp"

namespace stoker {

// Null when hwloc cannot load a topology; then `error` (if given) says why.
hwloc_topology_t process_hwloc(std::string* error = nullptr);

// The CPUs this process may run on: hwloc's allowed set (cgroup cpuset), which a thread
// may bind to even when the calling thread's own affinity is narrower (a training loop
// bound to its main CPUs). Falls back to the calling thread's mask without hwloc.
CpuSet process_allowed_cpus();

}  // namespace stoker
