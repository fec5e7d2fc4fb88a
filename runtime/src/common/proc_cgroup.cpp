#include "common/proc_cgroup.hpp"

#include <fstream>

#include "stoker/common/strings.hpp"

namespace stoker {

bool comma_list_has(std::string_view list, std::string_view want) {
  for (std::string_view item : split(list, ','))
    if (item == want) return true;
  return false;
}

std::vector<CgroupEntry> read_proc_cgroup(const std::string& file) {
  std::vector<CgroupEntry> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}

}  // namespace stoker
