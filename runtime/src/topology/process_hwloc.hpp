// Private: the process-wide hwloc topology (CPUs and memory, no I/O devices), loaded
// once on first use. Thread binding and the loader's NUMA-local batch arena share it.
#pragma once

#include <hwloc.h>

#include <string>

#include "stoker/common/cpuset.hpp"

namespace stoker {

// Null when hwloc cannot load a topology; then `error` (if given) says why.
hwloc_topology_t process_hwloc(std::string* error = nullptr);

// The CPUs this process may run on: hwloc's allowed set (cgroup cpuset), which a thread
// may bind to even when the calling thread's own affinity is narrower (a training loop
// bound to its main CPUs). Falls back to the calling thread's mask without hwloc.
CpuSet process_allowed_cpus();

// Keeps `mask` (the first call's only) as the CPUs this task was granted, which
// task_cpu_mask() returns from then on: pin_main_thread narrows the calling thread to the
// plan's main CPUs, and a later plan must still see the task's whole mask.
void remember_task_mask(const CpuSet& mask);

}  // namespace stoker
