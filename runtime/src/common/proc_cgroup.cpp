#include "common/proc_cgroup.hpp"

#include <fstream>

namespace stoker {

bool comma_list_has(std::string_view list, std::string_view want) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(start, end - start) == want) return true;
    start = end + 1;
  }
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
