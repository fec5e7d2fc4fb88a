// What this process may use: its CPU affinity, its memory limit (cgroup v2, v1, physical)
// and the threads it may still create (ulimit -u, the pids cgroup, kernel.threads-max).
#include <dirent.h>
#include <pwd.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "common/proc_cgroup.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "stoker/topology/topology.hpp"
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

// One limit on new threads: its room and how to say it.
struct Limit {
  uint64_t room = 0;
  std::string text;
};

// "Key:\tvalue ..." lines of a /proc/<pid>/status file: the first number after `key`.
std::optional<uint64_t> status_number(const std::string& status, const std::string& key) {
  const size_t at = status.find("\n" + key);
  if (at == std::string::npos) return std::nullopt;
  const size_t start = status.find_first_of("0123456789", at + key.size() + 1);
  if (start == std::string::npos) return std::nullopt;
  return values::parse_whole(
      status.substr(start, status.find_first_not_of("0123456789", start) - start));
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << "\n" << in.rdbuf();  // a leading newline: every key is found as "\nKey"
  return text.str();
}

// Threads of every process whose real uid is `uid` (RLIMIT_NPROC counts them all).
uint64_t threads_of_user(const std::string& root, uid_t uid) {
  uint64_t n = 0;
  DIR* proc = ::opendir(under_root(root, "/proc").c_str());
  if (proc == nullptr) return 0;
  while (const dirent* e = ::readdir(proc)) {
    if (!values::parse_whole(e->d_name)) continue;
    const std::string status =
        read_all(under_root(root, std::string("/proc/") + e->d_name + "/status"));
    if (status_number(status, "Uid:") == uint64_t{uid})
      n += status_number(status, "Threads:").value_or(1);
  }
  ::closedir(proc);
  return n;
}

std::string user_name(uid_t uid) {
  passwd pw{}, *found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    return std::string(pw.pw_name) + " (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

// RLIMIT_NPROC, unless this process is exempt (uid 0, CAP_SYS_RESOURCE or CAP_SYS_ADMIN).
std::optional<Limit> nproc_limit(const std::string& root) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const uid_t uid = ::getuid();
  std::string caps = read_all(under_root(root, "/proc/self/status"));
  const size_t at = caps.find("\nCapEff:");
  uint64_t eff = 0;
  if (at != std::string::npos) {
    const size_t from = at + 8, to = caps.find('\n', from);
    eff = values::parse_hex(trim(std::string_view(caps).substr(from, to - from))).value_or(0);
  }
  if (uid == 0 || (eff & ((uint64_t{1} << 24) | (uint64_t{1} << 21))) != 0) return std::nullopt;
  const uint64_t used = threads_of_user(root, uid), max = rl.rlim_cur;
  return Limit{max > used ? max - used : 0, "ulimit -u (RLIMIT_NPROC) is " + std::to_string(max) +
                                                " and user " + user_name(uid) + " runs " +
                                                std::to_string(used) + " threads"};
}

// The tightest pids.max - pids.current of cgroup `cgroup` under `top` and its ancestors.
std::optional<Limit> pids_limit(const std::string& top, std::string cgroup) {
  std::optional<Limit> best;
  while (true) {
    const std::string dir = under_root(top, cgroup);
    const auto max = read_first_line(under_root(dir, "pids.max"));
    const auto current = read_first_line(under_root(dir, "pids.current"));
    const auto m = max ? values::parse_whole(*max) : std::nullopt;  // "max": no limit
    const auto c = current ? values::parse_whole(*current) : std::nullopt;
    if (m.has_value() && c.has_value()) {
      const uint64_t limit = m.value(), used = c.value(), room = limit - std::min(limit, used);
      if (!best || room < best->room) {
        best = Limit{room, "pids.max of cgroup " + dir + " is " + std::to_string(limit) + " with " +
                               std::to_string(used) + " in use"};
      }
    }
    if (cgroup.empty() || cgroup == "/") break;
    const size_t slash = cgroup.find_last_of('/');
    cgroup = slash == std::string::npos ? "" : cgroup.substr(0, slash);
  }
  return best;
}

// kernel.threads-max against the threads of the whole machine (/proc/loadavg "run/total").
std::optional<Limit> kernel_limit(const std::string& root) {
  const auto max_text = read_first_line(under_root(root, "/proc/sys/kernel/threads-max"));
  const auto loadavg = read_first_line(under_root(root, "/proc/loadavg"));
  const size_t slash = loadavg ? loadavg->find('/') : std::string::npos;
  if (!max_text || slash == std::string::npos) return std::nullopt;
  const auto max = values::parse_whole(*max_text);
  const auto total =
      values::parse_whole(loadavg->substr(slash + 1, loadavg->find(' ', slash) - slash - 1));
  if (!max || !total) return std::nullopt;
  return Limit{*max - std::min(*max, *total), "kernel.threads-max is " + std::to_string(*max) +
                                                  " with " + std::to_string(*total) +
                                                  " threads on the machine"};
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
  for (int ncpus = 1024; ncpus <= CpuSet::kMaxCpu; ncpus *= 2) {
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

std::string ThreadRoom::text() const {
  if (!room) return "no thread limit applies";
  std::string t = "may create " + std::to_string(*room) + " more thread(s): ";
  for (size_t i = 0; i < limits.size(); ++i) t += (i ? "; " : "") + limits[i];
  return t;
}

ThreadRoom thread_room(const std::string& root) {
  std::vector<Limit> found;
  if (auto l = nproc_limit(root)) found.push_back(*l);
  for (const CgroupEntry& e : read_proc_cgroup(under_root(root, "/proc/self/cgroup"))) {
    const std::string top = e.is_v2()                  ? under_root(root, "/sys/fs/cgroup")
                            : e.has_controller("pids") ? under_root(root, "/sys/fs/cgroup/pids")
                                                       : "";
    if (top.empty()) continue;
    if (auto l = pids_limit(top, e.path)) found.push_back(*l);
  }
  std::sort(found.begin(), found.end(),
            [](const Limit& a, const Limit& b) { return a.room < b.room; });
  // The machine-wide limit only matters when it is the tightest.
  if (auto k = kernel_limit(root); k && (found.empty() || k->room < found.front().room)) {
    found.insert(found.begin(), *k);
  }
  ThreadRoom r;
  if (!found.empty()) r.room = found.front().room;
  for (const Limit& l : found) r.limits.push_back(l.text);
  return r;
}

}  // namespace stoker
