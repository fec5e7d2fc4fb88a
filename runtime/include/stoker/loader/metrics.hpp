// Loader metrics for Prometheus: a file in the text exposition format that the node_exporter
// textfile collector reads, rewritten atomically (a temporary, then rename) every few seconds.
//
//   STOKER_METRICS=/var/lib/prometheus/node-exporter/stoker-{job}-{rank}.prom
//   STOKER_METRICS_INTERVAL=5      (seconds, default 5)
//
// and a one-line summary per rank at exit with STOKER_VERBOSE=1 (--stoker-verbose).
//
// Implemented in src/loader/: metrics_writer.cpp, prometheus_text.cpp, summary_line.cpp.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "stoker/common/fork_check.hpp"
#include "stoker/loader/loader_stats.hpp"

namespace stoker {

// Labels on every sample (job_id, step_id, rank, node). Empty values are left out.
struct MetricLabels {
  std::string job_id, step_id, rank, node;
  // job_id: SLURM_JOB_ID, step_id: SLURM_STEP_ID, rank: `rank` when given, else the
  // launcher's (launch_ranks: OMPI_COMM_WORLD_RANK, RANK, SLURM_PROCID), else "0"; node:
  // SLURMD_NODENAME, else the host name. Throws stoker::Error naming a garbled launcher
  // variable.
  static MetricLabels from_environment(std::optional<uint64_t> rank = std::nullopt);
};

// The Prometheus text for one snapshot (HELP and TYPE before each family), written at
// `written_unix_seconds` (stoker_last_write_timestamp_seconds). Pure.
std::string prometheus_text(const LoaderStats& stats, const MetricLabels& labels,
                            double written_unix_seconds);

// Writes `text` to a temporary of its own (PATH.tmp.XXXXXX, made fresh by mkostemp: never a
// name someone planted, never through a link) then renames it over PATH, so a reader never
// sees half a file, also when two writers share PATH. The file is mode 0644
// whatever the umask (node-exporter reads it as another user). Throws stoker::Error naming
// the path when it cannot be written, with `todo` as what to do.
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& todo);

class MetricsWriter {
 public:
  using Snapshot = std::function<LoaderStats()>;
  // Writes once now (a bad path throws stoker::Error here, not later), then every
  // `interval` from a thread of its own. Later write failures are counted, not thrown.
  MetricsWriter(std::string path, MetricLabels labels, Snapshot snapshot,
                std::chrono::duration<double> interval = std::chrono::seconds(5));
  // stop(): the file ends with the final numbers. In a forked child (fork_check.hpp) it
  // writes, joins and locks nothing.
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  void flush();  // writes now (from the caller's thread)
  void stop();   // joins the thread after a last write; idempotent
  uint64_t writes() const;
  uint64_t failures() const;
  const std::string& path() const { return path_; }

  // A writer when STOKER_METRICS names a file, else null. STOKER_METRICS_INTERVAL gives
  // the period in seconds (a decimal > 0, default 5); anything else throws stoker::Error.
  static std::unique_ptr<MetricsWriter> from_environment(
      Snapshot snapshot, std::optional<uint64_t> rank = std::nullopt);

 private:
  void run();
  void write_now();

  std::string path_;
  MetricLabels labels_;
  Snapshot snapshot_;
  std::chrono::duration<double> interval_;
  mutable std::mutex mu_;
  std::mutex write_mu_;  // one write at a time (flush() and the thread share PATH.tmp)
  // On the heap: a forked child leaves it alone (destroying it would wait for the parent's
  // thread, which waited on it at the fork).
  std::unique_ptr<std::condition_variable> cv_ = std::make_unique<std::condition_variable>();
  bool stopping_ = false;
  uint64_t writes_ = 0, failures_ = 0;
  ForkCheck made_in_;
  std::thread thread_;
};

// "stoker rank 3: 1200 batches, 38400 samples in 60.2 s (638 samples/s, 1.2 GB/s), waited
//  4.1 % of the time, depth 6/16, 7 workers; read 12.0 s decode 80.1 s ..." on one line.
std::string summary_line(const LoaderStats& stats, uint64_t rank);
// True when STOKER_VERBOSE is set to 1 (the plugin exports it for --stoker-verbose).
bool verbose_from_environment();

}  // namespace stoker
