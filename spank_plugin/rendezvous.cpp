#include "rendezvous.hpp"

#include "stoker/plan/tune_decision.hpp"

namespace stoker::spank {

std::string first_host(std::string_view nodelist) {
  // The first entry ends at the first comma outside brackets.
  int depth = 0;
  size_t end = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  std::string_view entry = nodelist.substr(0, end);
  std::string host;
  // Expand every bracket group to its first value: "r[1-2]n[03-04]" -> "r1n03".
  while (!entry.empty()) {
    const size_t open = entry.find('[');
    if (open == std::string_view::npos) {
      host += entry;
      break;
    }
    host += entry.substr(0, open);
    const size_t close = entry.find(']', open);
    std::string_view range =
        entry.substr(open + 1, close == entry.npos ? entry.npos : close - open - 1);
    const size_t stop = range.find_first_of(",-");
    host += range.substr(0, stop);
    if (close == std::string_view::npos) break;
    entry.remove_prefix(close + 1);
  }
  return host;
}

std::string master_address(std::string_view nodelist, const NodeAddrLookup& node_addr) {
  const std::string host = first_host(nodelist);
  if (host.empty()) return "";
  const std::optional<std::string> addr = node_addr ? node_addr(host) : std::nullopt;
  return addr && !addr->empty() ? *addr : host;
}

int master_port(uint32_t job_id, uint32_t step_id) {
  constexpr uint32_t kNormalSlots = kStepSlots - 3;
  uint32_t slot = step_id % kNormalSlots;
  switch (step_kind(step_id)) {
    case StepKind::Batch:
      slot = kNormalSlots;
      break;
    case StepKind::Interactive:
      slot = kNormalSlots + 1;
      break;
    case StepKind::Extern:
      slot = kNormalSlots + 2;
      break;
    case StepKind::Normal:
      break;
  }
  return kPortBase + static_cast<int>((job_id % kJobGroups) * kStepSlots + slot);
}

}  // namespace stoker::spank
