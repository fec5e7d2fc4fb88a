// fit_prefetch: the one budget fit of the prefetch depths (docs/planner.md, "Planner rules", 6).
#include <algorithm>
#include <string>

#include "stoker/common/values.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

bool fit_prefetch(Plan& plan, uint64_t batch_bytes, int held) {
  const uint64_t reserved = static_cast<uint64_t>(std::max(held, 0));
  const uint64_t holds = batch_bytes ? plan.mem_budget / batch_bytes : 0;
  if (holds <= reserved) return false;
  const int room = static_cast<int>(std::min<uint64_t>(holds - reserved, limits::kMaxPrefetch));
  plan.batch_bytes = batch_bytes;
  std::string because = ": the budget holds " + std::to_string(holds) + " batch(es) of " +
                        values::format_bytes(batch_bytes);
  if (held > 0) because += ", " + std::to_string(held) + " of them held by the consumer";
  if (plan.prefetch_max > room) {
    plan.prefetch_max = room;
    plan.reasons.push_back({"prefetch_max", "lowered to " + std::to_string(room) + because});
  }
  if (plan.prefetch > plan.prefetch_max) {
    plan.prefetch = plan.prefetch_max;
    plan.reasons.push_back(
        {"prefetch", "lowered to " + std::to_string(plan.prefetch_max) + because});
  }
  return true;
}

}  // namespace stoker
