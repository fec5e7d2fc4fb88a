// The loader's stats in the Prometheus text exposition format (version 0.0.4), one family
// per metric with its HELP and TYPE lines first, as the textfile collector requires.
// Names follow Prometheus's conventions (docs/admin-guide.md, "Prometheus wiring"): base
// units (seconds, bytes), counters end in _total, a 0-1 share ends in _ratio.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string_view>

#include "stoker/common/launch_env.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/loader/measure_values.hpp"
#include "stoker/loader/metrics.hpp"

namespace stoker {

namespace {

// Label values escape backslash, double quote and newline.
std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += {'\\', c};
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

class Families {
 public:
  explicit Families(const MetricLabels& l) {
    // Not `job`: Prometheus gives every scraped series the scrape job's name in `job`.
    // `jobid` is the label jobstats' exporters (cgroup, GPU) put the Slurm job id in, so
    // that a query joins stoker's series to theirs; `job_id` is the same value under its
    // earlier name, kept for one release for the dashboards that select on it.
    const std::pair<const char*, const std::string*> all[] = {{"jobid", &l.job_id},
                                                              {"job_id", &l.job_id},
                                                              {"step_id", &l.step_id},
                                                              {"rank", &l.rank},
                                                              {"node", &l.node}};
    for (const auto& [name, value] : all) {
      if (value->empty()) continue;
      base_ += (base_.empty() ? "" : ",") + std::string(name) + "=\"" + escape(*value) + "\"";
    }
  }

  void family(const char* name, const char* type, const char* help) {
    out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  // One sample; `extra` is an additional label pair ("stage=\"read\""), already escaped.
  // Counts print as integers (exact past 2^53, where a double would round); the rest with
  // 15 significant digits (a Unix time to 10 microseconds; no binary noise such as 0.1000...01).
  void sample(const char* name, uint64_t value, const std::string& extra = {}) {
    line(name, std::to_string(value), extra);
  }
  void sample(const char* name, double value, const std::string& extra = {}) {
    char num[64];
    std::snprintf(num, sizeof num, "%.15g", value);
    line(name, num, extra);
  }
  template <typename T>
  void metric(const char* name, const char* type, const char* help, T value) {
    family(name, type, help);
    sample(name, value);
  }
  std::string take() { return std::move(out_); }

 private:
  void line(const char* name, const std::string& value, const std::string& extra) {
    std::string labels = base_;
    if (!extra.empty()) labels += (labels.empty() ? "" : ",") + extra;
    out_ += std::string(name) + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
  }
  std::string base_, out_;
};

}  // namespace

MetricLabels MetricLabels::from_environment(std::optional<uint64_t> rank) {
  const EnvGetter env = process_env();
  MetricLabels l{env("SLURM_JOB_ID").value_or(""), env("SLURM_STEP_ID").value_or(""), "",
                 node_name(env)};
  l.rank = std::to_string(rank ? *rank : launch_ranks(env).rank);
  return l;
}

std::string prometheus_text(const LoaderStats& s, const MetricLabels& labels,
                            double written_unix_seconds) {
  Families f(labels);
  const char* family = nullptr;  // rows of one series (the stages) follow one another
  for (const MeasureRow& row : run_measures()) {
    if (!row.prom) continue;
    if (!family || std::string_view(family) != row.prom)
      f.family(row.prom, row.prom_type, row.help);
    family = row.prom;
    const std::string label = row.prom_label ? row.prom_label : "";
    const MeasureValue v = base_value(measure_value(s, row.id), row.unit);
    if (const uint64_t* n = std::get_if<uint64_t>(&v))
      f.sample(row.prom, *n, label);
    else
      f.sample(row.prom, measure_in_base_unit(v, row.unit), label);
  }
  f.metric("stoker_last_write_timestamp_seconds", "gauge",
           "When this file was written (Unix time): older than a few intervals, the loader "
           "has stopped.",
           written_unix_seconds);
  return f.take();
}

}  // namespace stoker
