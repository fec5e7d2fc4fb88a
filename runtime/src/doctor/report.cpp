// The doctor's report: severities, counts, the exit code and its two renderings.
#include <nlohmann/json.hpp>

#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {

int Report::count(Severity s) const {
  int n = 0;
  for (const Finding& f : findings) n += f.severity == s;
  return n;
}

int Report::exit_code() const {
  return count(Severity::Error) > 0 ? 1 : 0;
}

std::string Report::text() const {
  std::string out;
  for (const Finding& f : findings) {
    char head[48];
    std::snprintf(head, sizeof head, "%-6s %-10s ", to_string(f.severity), f.check.c_str());
    out += head + f.message + "\n";
    if (!f.fix.empty()) out += std::string(18, ' ') + "fix: " + f.fix + "\n";
  }
  char tail[160];
  std::snprintf(tail, sizeof tail, "\n%zu checks: %d ok, %d info, %d warn, %d error\n",
                findings.size(), count(Severity::Ok), count(Severity::Info), count(Severity::Warn),
                count(Severity::Error));
  return out + tail;
}

std::string Report::json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Finding& f : findings) {
    list.push_back({{"check", f.check},
                    {"severity", to_string(f.severity)},
                    {"message", f.message},
                    {"fix", f.fix}});
  }
  nlohmann::json summary{{"ok", count(Severity::Ok)},
                         {"info", count(Severity::Info)},
                         {"warn", count(Severity::Warn)},
                         {"error", count(Severity::Error)},
                         {"exit_code", exit_code()}};
  return nlohmann::json{{"findings", list}, {"summary", summary}}.dump(2) + "\n";
}

}  // namespace stoker::doctor
