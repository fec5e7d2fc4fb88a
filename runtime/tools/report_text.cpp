// `stoker report` as text and as JSON.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "plan_json.hpp"
#include "report_output.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/record/run_measures.hpp"

namespace stoker::cli {

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f %%", 100 * share);
  return text;
}

std::string plan_text(const RunRecord& r) {
  return "profile " + (r.plan.profile.empty() ? std::string("-") : r.plan.profile) + ": " +
         std::to_string(r.cores()) + " cores (" + r.plan.cpus.to_string() + "), " +
         std::to_string(r.workers) + " workers, prefetch " + std::to_string(r.plan.prefetch) +
         ".." + std::to_string(r.prefetch_max) + " (depth reached " +
         std::to_string(r.depth_reached) + "), " + (r.plan.pin_memory ? "pinned" : "not pinned");
}

namespace {

std::string nodes_text(const StepSummary& s) {
  return join(std::vector<std::string>(s.nodes.begin(), s.nodes.end()));
}

}  // namespace

std::string report_text(const JobReport& rep, size_t top) {
  std::string out = "stoker report of " + rep.log + ": " + std::to_string(rep.steps.size()) +
                    " job step(s) from " + std::to_string(rep.lines) + " line(s)";
  if (rep.broken) out += ", " + std::to_string(rep.broken) + " broken line(s) skipped";
  out += "\n";
  if (rep.steps.empty()) return out + "No job step matches.\n";
  out += "\nJob steps by input wait, highest first";
  if (rep.steps.size() > top) out += " (the first " + std::to_string(top) + "; --top for more)";
  out += ":\n";
  char line[512];
  for (size_t i = 0; i < rep.steps.size() && i < top; ++i) {
    const StepSummary& s = rep.steps[i];
    std::snprintf(line, sizeof line,
                  "%2zu. job %s step %s  user %s  partition %s  %llu rank(s) on %s  wait %s "
                  "(worst: rank %llu, %s)  %.0f samples/s\n",
                  i + 1, s.job.c_str(), s.step.c_str(), s.user.c_str(),
                  s.partition.empty() ? "-" : s.partition.c_str(),
                  static_cast<unsigned long long>(s.ranks), nodes_text(s).c_str(),
                  percent(s.wait()).c_str(), static_cast<unsigned long long>(s.worst.rank),
                  percent(s.worst.wait_share).c_str(), s.rate_sum);
    out += line;
    if (s.ranks) {
      out += "    plan: " + plan_text(s.worst) + "\n";
      out += "    suggest: " + advise(s.worst).text + "\n";
    }
    for (const std::string& p : s.problems) out += "    " + p + "\n";
    if (s.problem_count > s.problems.size())
      out += "    ... " + std::to_string(s.problem_count - s.problems.size()) + " more\n";
  }
  out += "\nPer user and partition:\n";
  std::snprintf(line, sizeof line, "  %-16s %-12s %6s %10s  %s\n", "user", "partition", "steps",
                "mean wait", "worst step");
  out += line;
  for (const GroupSummary& g : rep.groups) {
    std::snprintf(line, sizeof line, "  %-16s %-12s %6llu %10s  %s (%s)\n", g.user.c_str(),
                  g.partition.empty() ? "-" : g.partition.c_str(),
                  static_cast<unsigned long long>(g.steps),
                  percent(g.wait_sum / static_cast<double>(g.steps)).c_str(), g.worst_step.c_str(),
                  percent(g.worst_wait).c_str());
    out += line;
  }
  return out;
}

namespace {

using nlohmann::json;

// The worst rank: who, and every quantity its record holds (run_measures()), by name.
json worst_rank_json(const RunRecord& w) {
  const json all = nlohmann::json::parse(to_json(w));
  json out = {{"rank", w.rank}, {"node", w.node}};
  for (const MeasureRow& row : run_measures()) {
    if (row.record.index() != 0 && all.contains(row.name)) out[row.name] = all[row.name];
  }
  return out;
}

// The plan it ran, each field by its name (plan_fields()), with the cores it had. Kept for
// one release (docs/admin-guide.md, "Renamed"): "pin" (now pin_memory), and
// "budget_depth" and "depth_reached" (now in worst_rank).
json plan_json(const RunRecord& w) {
  json out = {{"cores", w.cores()},
              {"pin", w.plan.pin_memory},
              {"budget_depth", w.budget_depth},
              {"depth_reached", w.depth_reached}};
  for (const PlanField& f : plan_fields()) out[f.name] = field_json(f, w.plan);
  return out;
}

}  // namespace

std::string report_json(const JobReport& rep, size_t top) {
  json steps = json::array();
  for (size_t i = 0; i < rep.steps.size() && i < top; ++i) {
    const StepSummary& s = rep.steps[i];
    const RunRecord& w = s.worst;
    json step = {{"job", s.job},
                 {"step", s.step},
                 {"user", s.user},
                 {"partition", s.partition},
                 {"time", s.time},
                 {"nodes", s.nodes},
                 {"ranks", s.ranks},
                 {"wait_share", s.wait()},
                 {"samples_per_s", s.rate_sum},
                 {"problems", s.problems},
                 {"problem_count", s.problem_count}};
    if (s.ranks) {
      step["worst_rank"] = worst_rank_json(w);
      step["plan"] = plan_json(w);
      step["suggestion"] = advise(w).text;
    }
    steps.push_back(std::move(step));
  }
  json groups = json::array();
  for (const GroupSummary& g : rep.groups) {
    groups.push_back({{"user", g.user},
                      {"partition", g.partition},
                      {"steps", g.steps},
                      {"wait_share", g.wait_sum / static_cast<double>(g.steps)},
                      {"worst_step", g.worst_step},
                      {"worst_wait_share", g.worst_wait}});
  }
  const json doc = {{"log", rep.log},
                    {"lines", rep.lines},
                    {"broken_lines", rep.broken},
                    {"step_count", rep.steps.size()},
                    {"steps", steps},
                    {"groups", groups}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace stoker::cli
