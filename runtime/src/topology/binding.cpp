// Binding the calling process or thread with hwloc. Never throws: binding is an
// optimisation, so a refusal becomes a reason the caller can show.
#include <hwloc.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "stoker/topology/hwloc_plugins.hpp"
#include "stoker/topology/topology.hpp"
#include "topology/hwloc_convert.hpp"
#include "topology/mem_policy.hpp"
#include "topology/process_hwloc.hpp"

namespace stoker {

namespace {

// Frees an hwloc bitmap at scope exit.
struct Bitmap {
  hwloc_bitmap_t b;
  explicit Bitmap(hwloc_bitmap_t bitmap) : b(bitmap) {}
  ~Bitmap() { hwloc_bitmap_free(b); }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
};

std::string failure(const std::string& what, const std::string& set) {
  return "hwloc could not bind " + what + " to " + set + ": " + std::strerror(errno);
}

}  // namespace

// The process-wide topology: CPUs and memory only (no I/O discovery, which is slow),
// loaded once on first use by whichever thread gets there first.
hwloc_topology_t process_hwloc(std::string* error) {
  static std::once_flag once;
  static hwloc_topology_t topo = nullptr;
  static std::string load_error;
  std::call_once(once, [] {
    hwloc_topology_t t = nullptr;
    if (init_hwloc_topology(&t) != 0) {
      load_error = std::string("hwloc_topology_init failed: ") + std::strerror(errno);
      return;
    }
    if (hwloc_topology_load(t) != 0) {
      load_error = std::string("hwloc topology discovery failed: ") + std::strerror(errno);
      hwloc_topology_destroy(t);
      return;
    }
    topo = t;  // kept for the life of the process
  });
  if (!topo && error) *error = load_error;
  return topo;
}

BindResult bind_this_process(const Topology& topo, const CpuSet& cpus, const std::vector<int>& numa,
                             MemBind mem_bind) {
  BindResult r;
  if (!topo.is_this_system || !topo.hwloc) {
    r.reason = "topology is " + topo.source + ", not this machine: binding skipped";
    return r;
  }
  auto t = static_cast<hwloc_topology_t>(topo.hwloc.get());
  std::string reasons;
  if (cpus.empty()) {
    reasons = "no CPUs given: CPU binding skipped";
  } else {
    Bitmap set(detail::to_hwloc_bitmap(cpus));
    r.cpus_bound = hwloc_set_cpubind(t, set.b, HWLOC_CPUBIND_PROCESS) == 0;
    if (!r.cpus_bound) reasons = failure("the process's CPUs", cpus.to_string());
  }
  if (!numa.empty() && mem_bind != MemBind::None) {
    const std::string applied = apply_mem_bind(mem_bind, numa, &r.memory_bound);
    if (r.memory_bound) {
      r.memory = applied;
    } else {
      reasons += (reasons.empty() ? "" : "; ") + applied;
    }
  }
  r.reason = reasons;
  return r;
}

bool bind_this_thread(const CpuSet& cpus, std::string* why) {
  if (cpus.empty()) {
    if (why) *why = "no CPUs given: thread binding skipped";
    return false;
  }
  hwloc_topology_t t = process_hwloc(why);
  if (!t) return false;
  Bitmap set(detail::to_hwloc_bitmap(cpus));
  if (hwloc_set_cpubind(t, set.b, HWLOC_CPUBIND_THREAD) != 0) {
    if (why) *why = failure("this thread", cpus.to_string());
    return false;
  }
  if (why) why->clear();
  return true;
}

CpuSet process_allowed_cpus() {
  hwloc_topology_t t = process_hwloc(nullptr);
  if (t == nullptr) return current_cpu_mask();
  return detail::to_cpuset(hwloc_topology_get_allowed_cpuset(t));
}

}  // namespace stoker
