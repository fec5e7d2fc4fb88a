// The plugin's work at step end on one node (issue 24: under 2 ms per node): for 1 and 8
// ranks, collect_records (open without following links, check owner/links/size, strict
// parse), one O_APPEND write per log line, and the step folder removed. Each record is a
// full one (every field, the 48-point timeline), as a loader writes it; the folder and the
// records are written outside the timed part.
//
//   build/benchmarks/bench_record_collect
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "record_collect.hpp"

namespace fs = std::filesystem;
using namespace stoker;

namespace {

RunRecord full_record(uint64_t rank) {
  RunRecord r;
  r.job = "4242";
  r.step = "0";
  r.node = "n1";
  r.rank = rank;
  r.profile = "cv";
  r.local_rank = rank % 8;
  r.cpus = r.main_cpus = "0-13";
  r.worker_cpus = "1-13";
  r.numa = "0";
  r.gpu = "0000:17:00.0";
  r.cores = 14;
  r.workers = 13;
  r.prefetch = 4;
  r.prefetch_max = 8;
  r.mem_budget = uint64_t{8} << 30;
  r.slot_bytes = 38535168;
  r.budget_depth = 62;
  r.prefetch_max_reason = "room to grow: 2 x prefetch 4, at least 8 = 8, lowered to MaxPrefetch=8";
  r.samples = 384000;
  r.batches = 6000;
  r.seconds = 600.5;
  r.samples_per_s = 639.4;
  r.wait_share = 0.41;
  r.depth_reached = 8;
  r.at_max_share = 0.7;
  r.decode_warnings = 3;
  r.end = "close";
  for (int i = 0; i < 48; ++i) r.timeline.push_back({12.5 * (i + 1), 0.3 + i / 200.0, 4 + i % 5});
  return r;
}

void BM_CollectStep(benchmark::State& state) {
  const auto ranks_on_node = static_cast<uint64_t>(state.range(0));
  const fs::path root =
      fs::temp_directory_path() / ("stoker_bench_collect_" + std::to_string(::getpid()));
  fs::create_directories(root);
  fs::permissions(root, fs::perms(0755));
  const std::string log = (root / "jobs.jsonl").string();
  spank::StepIdentity who{"2026-12-03T08:00:00Z", "4242", "0", "n1", "alice", "gpu", ::geteuid()};
  std::vector<uint64_t> ranks;
  std::vector<std::string> texts;
  for (uint64_t r = 0; r < ranks_on_node; ++r) {
    ranks.push_back(r);
    texts.push_back(to_json(full_record(r)));
  }
  for (auto _ : state) {
    state.PauseTiming();
    const std::string folder =
        spank::make_step_folder(root.string(), "4242.0.0", ::geteuid(), ::getegid());
    for (uint64_t r : ranks) std::ofstream(fs::path(folder) / run_record_file(r)) << texts[r];
    state.ResumeTiming();
    const std::vector<JobLogLine> lines =
        spank::collect_records(root.string(), "4242.0.0", ranks, who);
    std::vector<std::string> out;
    for (const JobLogLine& l : lines) out.push_back(to_json(l));
    const std::string problem = spank::append_to_log(log, out) +
                                spank::remove_step_folder(root.string(), "4242.0.0", ranks);
    if (!problem.empty() || lines.size() != ranks.size() || lines.back().status != "ok") {
      state.SkipWithError(("collection failed: " + problem).c_str());
      break;
    }
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}
BENCHMARK(BM_CollectStep)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
