#include "loader/process_hwloc.hpp"

#include "stoker/topology.hpp"

namespace stoker {

hwloc_topology_t process_hwloc() {
  static hwloc_topology_t topo = [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return static_cast<hwloc_topology_t>(nullptr);
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      return static_cast<hwloc_topology_t>(nullptr);
    }
    return t;
  }();
  return topo;
}

CpuSet process_allowed_cpus() {
  hwloc_topology_t t = process_hwloc();
  if (t == nullptr) return current_cpu_mask();
  CpuSet allowed;
  hwloc_const_cpuset_t set = hwloc_topology_get_allowed_cpuset(t);
  for (int cpu = hwloc_bitmap_first(set); cpu >= 0; cpu = hwloc_bitmap_next(set, cpu)) {
    allowed.set(cpu);
  }
  return allowed;
}

}  // namespace stoker
