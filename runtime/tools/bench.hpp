// `stoker bench`'s pieces shared by its files: the options every workload takes, the loader
// run (bench_run.cpp) and the per-core limits (bench_limit.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "stoker/loader/source.hpp"
#include "stoker/loader/transform.hpp"

namespace stoker::cli {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Common {
  size_t batch_size = 0;
  uint64_t batches = 0;  // 0: whole epochs
  uint64_t epochs = 2;
  int workers = 0, prefetch = 0, max_depth = 0;
  double step_ms = 0;  // simulated training step per batch
  uint64_t world_size = 0, rank = 0, seed = 0;
  bool json = false, fixed_depth = false;
};

void add_common(CLI::App* cmd, Common& c, size_t default_batch);

// Runs the loader for this process over `source` and prints the report (text, or one JSON
// object with --json); `extra` is merged into the JSON.
void run_bench(const char* what, std::shared_ptr<const Source> source,
               std::shared_ptr<const Transform> transform, const Common& c,
               double input_bytes_per_sample, nlohmann::json extra);

// `stoker bench images --limit`: one thread's decode+transform rate over files held in
// memory, and libjpeg-turbo's full decode alone, each for `seconds`.
void run_limit(const Common& c, double seconds, const Source& source, const Transform& transform);

}  // namespace stoker::cli
