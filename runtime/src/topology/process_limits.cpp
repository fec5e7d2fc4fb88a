// What this process may use: its CPU affinity and its memory limit (cgroup v2, v1, physical).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <optional>

#include "common/proc_cgroup.hpp"
#include "stoker/error.hpp"
#include "stoker/plan/strings.hpp"
#include "stoker/plan/topology.hpp"
#include "stoker/plan/values.hpp"
#include "topology/process_hwloc.hpp"

namespace stoker {

namespace {

// cgroup v1 reports "no limit" as a page-rounded LONG_MAX; anything this big is no limit.
constexpr uint64_t kNoLimitV1 = uint64_t{1} << 60;

// The smallest limit in `file` found in `dir` and its ancestors up to `top` (cgroup limits
// nest: a child can never use more than its parents allow). `parse` maps a file's text to a
// limit, nullopt meaning none.
template <typename Parse>
std::optional<uint64_t> min_over_ancestors(const std::string& top, std::string cgroup,
                                           const std::string& file, Parse parse) {
  std::optional<uint64_t> best;
  while (true) {
    if (auto text = read_first_line(under_root(under_root(top, cgroup), file))) {
      if (auto v = parse(*text)) best = best ? std::min(*best, *v) : *v;
    }
    if (cgroup.empty() || cgroup == "/") break;
    size_t slash = cgroup.find_last_of('/');
    cgroup = slash == std::string::npos ? "" : cgroup.substr(0, slash);
  }
  return best;
}

uint64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

std::mutex task_mask_mu;
std::optional<CpuSet> task_mask;  // set once stoker pinned a thread (pin_main_thread)
}  // namespace

void remember_task_mask(const CpuSet& mask) {
  std::lock_guard lk(task_mask_mu);
  if (!task_mask) task_mask = mask;
}

CpuSet task_cpu_mask() {
  {
    std::lock_guard lk(task_mask_mu);
    if (task_mask) return *task_mask;
  }
  return current_cpu_mask();
}

CpuSet current_cpu_mask() {
  // Grow the mask until the kernel accepts its size (machines with more than 1024 CPUs).
  for (int ncpus = 1024; ncpus <= (1 << 16); ncpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpus);
    if (!set) break;
    size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      CpuSet s;
      for (int c = 0; c < ncpus; ++c) {
        if (CPU_ISSET_S(c, size, set)) s.set(c);
      }
      CPU_FREE(set);
      return s;
    }
    int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) break;
  }
  throw Error("sched_getaffinity", "cannot read this process's CPU affinity",
              "pass the CPUs explicitly (--cpus LIST)");
}

uint64_t memory_limit_bytes(const std::string& root) {
  uint64_t physical = physical_memory();
  std::string v2_path, v1_path;
  bool have_v2 = false, have_v1 = false;
  for (const CgroupEntry& e : read_proc_cgroup(under_root(root, "/proc/self/cgroup"))) {
    if (e.is_v2()) {
      have_v2 = true;
      v2_path = e.path;
    } else if (e.has_controller("memory")) {
      have_v1 = true;
      v1_path = e.path;
    }
  }
  std::optional<uint64_t> limit;
  if (have_v2) {
    limit = min_over_ancestors(under_root(root, "/sys/fs/cgroup"), v2_path, "memory.max",
                               [](const std::string& t) -> std::optional<uint64_t> {
                                 return t == "max" ? std::nullopt : values::parse_whole(t);
                               });
  }
  if (!limit && have_v1) {
    limit = min_over_ancestors(under_root(root, "/sys/fs/cgroup/memory"), v1_path,
                               "memory.limit_in_bytes",
                               [](const std::string& t) -> std::optional<uint64_t> {
                                 auto v = values::parse_whole(t);
                                 return v && *v < kNoLimitV1 ? v : std::nullopt;
                               });
  }
  // A cgroup limit above the machine's memory is no limit at all.
  if (limit && (physical == 0 || *limit < physical)) return *limit;
  return physical;
}

}  // namespace stoker
