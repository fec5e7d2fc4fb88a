#include "common/slurm_tasks.hpp"

#include <charconv>
#include <string>

#include "stoker/error.hpp"

namespace stoker {

uint64_t slurm_tasks_on_node(std::string_view name, std::string_view list, uint64_t node) {
  auto bad = [&] {
    return Error(std::string(name),
                 "'" + std::string(list) + "' is not a Slurm task list such as 2(x3),1");
  };
  auto number = [&](std::string_view s) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) throw bad();
    return v;
  };
  uint64_t first = 0;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find(',', i);
    if (j == std::string_view::npos) j = list.size();
    std::string_view item = list.substr(i, j - i);
    uint64_t repeat = 1;
    if (const size_t p = item.find("(x"); p != std::string_view::npos) {
      if (item.back() != ')') throw bad();
      repeat = number(item.substr(p + 2, item.size() - p - 3));
      item = item.substr(0, p);
    }
    const uint64_t tasks = number(item);
    if (node < first + repeat) return tasks;
    first += repeat;
    i = j + 1;
  }
  return 0;
}

}  // namespace stoker
