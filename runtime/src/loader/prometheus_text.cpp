// The loader's stats in the Prometheus text exposition format (version 0.0.4), one family
// per metric with its HELP and TYPE lines first, as the textfile collector requires.
// Names follow Prometheus's conventions (docs/admin-guide.md, "Prometheus wiring"): base
// units (seconds, bytes), counters end in _total, a 0-1 share ends in _ratio.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "stoker/loader/metrics.hpp"
#include "stoker/common/launch_env.hpp"

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

double seconds(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

// Slurm's name for the node (one host may run several emulated nodes), else the host name.
std::string node_name(const EnvGetter& env) {
  if (auto slurm = env_nonempty(env, "SLURMD_NODENAME")) return *slurm;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

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
  const double wall = seconds(s.wall_ns);
  f.metric("stoker_samples_total", "counter", "Samples delivered to the consumer.", s.samples);
  f.metric("stoker_batches_total", "counter", "Batches delivered to the consumer.", s.batches);
  f.metric("stoker_bytes_total", "counter", "Sample bytes delivered to the consumer.", s.bytes);
  f.metric("stoker_samples_skipped_total", "counter", "Corrupt samples left out.", s.skipped);
  f.metric("stoker_decode_warnings_total", "counter", "Samples decoded with warnings.",
           s.decode_warnings);
  f.metric("stoker_samples_per_second", "gauge",
           "Mean throughput since the first batch was asked for, in samples per second.",
           wall > 0 ? static_cast<double>(s.samples) / wall : 0.0);
  f.metric("stoker_bytes_per_second", "gauge",
           "Mean throughput since the first batch was asked for, in bytes per second.",
           wall > 0 ? static_cast<double>(s.bytes) / wall : 0.0);
  f.metric("stoker_wall_seconds_total", "counter",
           "Seconds since the consumer first asked for a batch.", wall);
  f.metric("stoker_consumer_wait_seconds_total", "counter",
           "Seconds the consumer blocked waiting for a batch.", seconds(s.consumer_wait_ns));
  f.metric("stoker_consumer_wait_ratio", "gauge",
           "Share of the wall time the consumer was starved (0 to 1).", s.wait_share);
  f.metric("stoker_prefetch_depth_batches", "gauge", "Batches the loader keeps in flight now.",
           static_cast<uint64_t>(std::max(s.depth, 0)));
  f.metric("stoker_prefetch_max_batches", "gauge",
           "The most batches in flight the memory budget allows (prefetch_max).",
           static_cast<uint64_t>(std::max(s.max_depth, 0)));
  f.metric("stoker_workers", "gauge", "Loader worker threads.",
           static_cast<uint64_t>(std::max(s.workers, 0)));
  f.metric("stoker_memory_budget_bytes", "gauge", "The plan's prefetch memory budget in bytes.",
           s.mem_budget);

  f.family("stoker_stage_seconds_total", "counter",
           "Worker seconds spent per pipeline stage, summed over the workers.");
  const std::pair<const char*, uint64_t> stages[] = {{"read", s.stages.read_ns},
                                                     {"decode", s.stages.decode_ns},
                                                     {"transform", s.stages.transform_ns},
                                                     {"collate", s.stages.collate_ns}};
  for (const auto& [stage, ns] : stages)
    f.sample("stoker_stage_seconds_total", seconds(ns), std::string("stage=\"") + stage + "\"");
  f.metric("stoker_produce_seconds_total", "counter",
           "Worker seconds spent making the delivered batches (all stages).",
           seconds(s.produce_ns));
  f.metric("stoker_last_write_timestamp_seconds", "gauge",
           "When this file was written (Unix time): older than a few intervals, the loader "
           "has stopped.",
           written_unix_seconds);
  return f.take();
}

}  // namespace stoker
