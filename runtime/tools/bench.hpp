// `stoker bench`'s pieces shared by its files: the options every workload takes, the loader
// run (bench_run.cpp) and the per-core limits (bench_limit.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stoker/loader/dataset.hpp"
#include "stoker/loader/loader_options.hpp"
#include "stoker/sources/shard_stream.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker::cli {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Common {
  uint64_t batches = 0;  // 0: whole epochs
  uint64_t epochs = 2;
  double step_ms = 0;  // simulated training step per batch
  bool json = false, fixed_depth = false;
  bool drop_cache_flag = false;
  std::vector<std::string> drop_cache;  // with --drop-cache: the dataset's files and folders
  // The loader's options as given: a flag for each row of loader_fields() that `stoker bench`
  // offers (--batch-size, --workers, ...), by the row's name; "": not given.
  std::map<std::string, std::string> loader_flags;
  // The options those flags give (--fixed-depth too); stoker::Error naming a bad flag.
  LoaderOptions loader_options() const;
};

void add_common(CLI::App* cmd, Common& c, size_t default_batch);

// Opens `spec` through the loader for this process (Loader::open: plan, dataset, world),
// runs it and prints the report (text, or one JSON object with --json); `extra` is merged
// into the JSON.
void run_bench(const char* what, DatasetSpec spec, const Common& c, nlohmann::json extra);

// `stoker bench images --limit`: one thread's decode+transform rate over the files of `spec`
// held in memory, and the full decode alone (libjpeg-turbo or libpng), each for `seconds`.
void run_limit(const Common& c, double seconds, const DatasetSpec& spec);

// Reads (bench_io.cpp). drop_page_cache drops the page cache of every file under `paths`
// (posix_fadvise DONTNEED), so that a run reads from storage even right after the source's
// index pass read the files.
void drop_page_cache(const std::vector<std::string>& paths);

// This process's reads as the kernel counts them (/proc/self/io): read() calls, bytes they
// returned, and bytes fetched from storage (not from the page cache).
struct IoCounters {
  uint64_t syscr = 0, rchar = 0, read_bytes = 0;
};
IoCounters io_counters();

// The run's reads between `a` and `b`: read() calls and bytes, and a streamed source's shard
// reads, as JSON (read_report) and as report lines (print_reads).
nlohmann::json read_report(const IoCounters& a, const IoCounters& b, double wall,
                           const ReadCounters& stream);
void print_reads(const nlohmann::json& j);

}  // namespace stoker::cli
