// Reading /proc/self/cgroup, which the memory limit (topology), the CPU quota check
// (doctor) and the plugin's step cpuset all start from. Each line is
// "hierarchy-id:controllers:path"; cgroup v2's is "0::path".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stoker {

// True when the comma-separated `list` ("cpu,cpuacct") holds `want` exactly.
bool comma_list_has(std::string_view list, std::string_view want);

struct CgroupEntry {
  std::string id, controllers, path;
  bool is_v2() const { return id == "0" && controllers.empty(); }
  bool has_controller(std::string_view c) const { return comma_list_has(controllers, c); }
};

// The entries of a /proc/<pid>/cgroup file, in file order; malformed lines are skipped,
// and a missing file gives none.
std::vector<CgroupEntry> read_proc_cgroup(const std::string& file);

}  // namespace stoker
