// The Plan's own members (plan.hpp).
#include "stoker/plan/plan.hpp"

namespace stoker {

std::string Plan::reason(const std::string& field) const {
  std::string out;
  for (const Reason& r : reasons)
    if (r.field == field) out += (out.empty() ? "" : "; ") + r.text;
  return out;
}

bool operator==(const Reason& a, const Reason& b) {
  return a.field == b.field && a.text == b.text;
}

}  // namespace stoker
