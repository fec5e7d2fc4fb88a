// The cgroup CPU quota of this process, read the way the kernel applies it: the cgroup of
// /proc/self/cgroup under the mount point /proc/self/mountinfo gives for its hierarchy,
// and every ancestor up to that mount (a child can never run more than its parents).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/proc_cgroup.hpp"
#include "stoker/doctor.hpp"

namespace stoker::doctor {

namespace {

namespace fs = std::filesystem;

struct Hierarchy {
  bool present = false;
  std::string cgroup;      // the process's path in it, from /proc/self/cgroup
  std::string mount_root;  // the hierarchy path mounted (not "/" inside a cgroup namespace)
  std::string mount_point;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

std::optional<int64_t> parse_int(const std::string& s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::string> first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

fs::path under(const std::string& root, const std::string& abs) {
  return fs::path(root) / fs::path(abs).relative_path();
}

// Fills the cgroup paths of the v2 hierarchy and of v1's cpu controller.
void read_cgroups(const std::string& root, Hierarchy& v2, Hierarchy& v1) {
  for (const CgroupEntry& e : read_proc_cgroup(under(root, "/proc/self/cgroup"))) {
    Hierarchy& h = e.is_v2() ? v2 : v1;
    if (&h == &v1 && !e.has_controller("cpu")) continue;
    h.present = true;
    h.cgroup = e.path;
  }
}

// Fills the mount points; without mountinfo, the usual places.
void read_mounts(const std::string& root, Hierarchy& v2, Hierarchy& v1) {
  std::ifstream in(under(root, "/proc/self/mountinfo"));
  std::string line;
  bool found_v2 = false, found_v1 = false;
  while (std::getline(in, line)) {
    // "id parent M:m root mount-point options [optional...] - fstype source super-options"
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::vector<std::string> pre = split(line.substr(0, dash), ' ');
    std::vector<std::string> post = split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    if (post[0] == "cgroup2" && !found_v2) {
      found_v2 = true;
      v2.mount_root = pre[3];
      v2.mount_point = pre[4];
    } else if (post[0] == "cgroup" && comma_list_has(post[2], "cpu") && !found_v1) {
      found_v1 = true;
      v1.mount_root = pre[3];
      v1.mount_point = pre[4];
    }
  }
  if (!found_v2) v2.mount_root = "/", v2.mount_point = "/sys/fs/cgroup";
  if (!found_v1) v1.mount_root = "/", v1.mount_point = "/sys/fs/cgroup/cpu";
}

// The quota (CPUs) in one cgroup directory; nullopt when it has none.
using QuotaReader = std::optional<double> (*)(const fs::path& dir);

std::optional<double> quota_v2(const fs::path& dir) {
  auto text = first_line(dir / "cpu.max");  // "max 100000" or "50000 100000"
  if (!text) return std::nullopt;
  std::vector<std::string> f = split(*text, ' ');
  if (f.size() != 2 || f[0] == "max") return std::nullopt;
  auto q = parse_int(f[0]), p = parse_int(f[1]);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> quota_v1(const fs::path& dir) {
  auto qt = first_line(dir / "cpu.cfs_quota_us"), pt = first_line(dir / "cpu.cfs_period_us");
  if (!qt || !pt) return std::nullopt;
  auto q = parse_int(*qt), p = parse_int(*pt);  // quota -1: none
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<double> smallest_quota(const std::string& root, const Hierarchy& h,
                                     QuotaReader read) {
  if (!h.present) return std::nullopt;
  // The path below the mount: inside a cgroup namespace /proc/self/cgroup is already
  // relative to the mounted root.
  std::string rel = h.cgroup;
  if (h.mount_root != "/" && rel.rfind(h.mount_root, 0) == 0) rel = rel.substr(h.mount_root.size());
  const fs::path top = under(root, h.mount_point);
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
