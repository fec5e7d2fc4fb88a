// The cgroup CPU quota of this process, read the way the kernel applies it: the cgroup of
// /proc/self/cgroup under the mount point /proc/self/mountinfo gives for its hierarchy,
// and every ancestor up to that mount (a child can never run more than its parents).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/proc_cgroup.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {

namespace {

namespace fs = std::filesystem;

struct Hierarchy {
  bool present = false;
  std::string cgroup;      // the process's path in it, from /proc/self/cgroup
  std::string mount_root;  // the hierarchy path mounted (not "/" inside a cgroup namespace)
  std::string mount_point;
};

// Fills the cgroup paths of the v2 hierarchy and of v1's cpu controller.
void read_cgroups(const std::string& root, Hierarchy& v2, Hierarchy& v1) {
  for (const CgroupEntry& e : read_proc_cgroup(under_root(root, "/proc/self/cgroup"))) {
    Hierarchy& h = e.is_v2() ? v2 : v1;
    if (&h == &v1 && !e.has_controller("cpu")) continue;
    h.present = true;
    h.cgroup = e.path;
  }
}

// Fills the mount points; without mountinfo, the usual places.
void read_mounts(const std::string& root, Hierarchy& v2, Hierarchy& v1) {
  std::ifstream in(under_root(root, "/proc/self/mountinfo"));
  std::string line;
  bool found_v2 = false, found_v1 = false;
  while (std::getline(in, line)) {
    // "id parent M:m root mount-point options [optional...] - fstype source super-options"
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::string_view text = line;
    const auto pre = split(text.substr(0, dash), ' '), post = split(text.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    if (post[0] == "cgroup2" && !found_v2) {
      found_v2 = true;
      v2.mount_root = std::string(pre[3]);
      v2.mount_point = std::string(pre[4]);
    } else if (post[0] == "cgroup" && comma_list_has(post[2], "cpu") && !found_v1) {
      found_v1 = true;
      v1.mount_root = std::string(pre[3]);
      v1.mount_point = std::string(pre[4]);
    }
  }
  if (!found_v2) v2.mount_root = "/", v2.mount_point = "/sys/fs/cgroup";
  if (!found_v1) v1.mount_root = "/", v1.mount_point = "/sys/fs/cgroup/cpu";
}

// The quota (CPUs) in one cgroup directory; nullopt when it has none.
using QuotaReader = std::optional<double> (*)(const fs::path& dir);

std::optional<double> quota_v2(const fs::path& dir) {
  auto text = read_first_line((dir / "cpu.max").string());  // "max 100000" or "50000 100000"
  if (!text) return std::nullopt;
  const auto f = split(*text, ' ');
  if (f.size() != 2 || f[0] == "max") return std::nullopt;
  const auto q = values::parse_whole(f[0], 1), p = values::parse_whole(f[1], 1);
  if (!q || !p) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> quota_v1(const fs::path& dir) {
  const auto qt = read_first_line((dir / "cpu.cfs_quota_us").string());
  const auto pt = read_first_line((dir / "cpu.cfs_period_us").string());
  if (!qt || !pt) return std::nullopt;
  // Quota -1 (none) is not a whole number: no quota.
  const auto q = values::parse_whole(*qt, 1), p = values::parse_whole(*pt, 1);
  if (!q || !p) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> smallest_quota(const std::string& root, const Hierarchy& h,
                                     QuotaReader read) {
  if (!h.present) return std::nullopt;
  // The path below the mount: inside a cgroup namespace /proc/self/cgroup is already
  // relative to the mounted root.
  std::string rel = h.cgroup;
  if (h.mount_root != "/" && rel.rfind(h.mount_root, 0) == 0) rel = rel.substr(h.mount_root.size());
  const fs::path top = under_root(root, h.mount_point);
  fs::path r = fs::path(rel).relative_path();
  std::optional<double> best;
  while (true) {
    if (auto q = read(top / r)) best = best ? std::min(*best, *q) : *q;
    if (r.empty()) break;
    r = r.parent_path();
  }
  return best;
}

}  // namespace

std::optional<double> cgroup_cpu_quota(const std::string& root) {
  Hierarchy v2, v1;
  read_cgroups(root, v2, v1);
  read_mounts(root, v2, v1);
  auto a = smallest_quota(root, v2, quota_v2), b = smallest_quota(root, v1, quota_v1);
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace stoker::doctor
