// The plugin's work at step end on one node (under 2 ms per node): for 1 and 8
// ranks, collect_records (open without following links, check owner/links/size, strict
// parse), the job log's writer process (forked: the path walked and checked, one O_APPEND
// write per log line, close checked), and the step folder removed. Each record is a full one
// (every field, the 48-point timeline), as a loader writes it; the folder and the records are
// written outside the timed part. The process holds 12 MiB, about what a slurmstepd with the
// plugin holds (10 MB resident, measured on the local cluster): a fork copies its page tables.
//
//   build/benchmarks/bench_record_collect
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "job_log.hpp"
#include "record_collect.hpp"
#include "run_record_sample.hpp"

namespace fs = std::filesystem;
using namespace stoker;

namespace {

// A record as a loader writes it at close: every field, a full 48-point timeline.
RunRecord full_record(uint64_t rank) {
  RunRecord r = test::sample_run_record();
  r.rank = rank;
  r.plan.local_rank = static_cast<int>(rank);
  r.plan.local_size = static_cast<int>(rank) + 1;
  r.plan.main_cpus = CpuSet::parse("0");
  r.plan.worker_cpus = CpuSet::parse("1-5");
  r.plan.numa = {0};
  r.plan.gpu = "0000:17:00.0";
  r.decode_warnings = 3;
  r.timeline.clear();
  for (int i = 0; i < 48; ++i) r.timeline.push_back({12.5 * (i + 1), 0.3 + i / 200.0, 4 + i % 5});
  return r;
}

void BM_CollectStep(benchmark::State& state) {
  static std::vector<char> resident(12 << 20, 1);  // touched: slurmstepd's resident size
  benchmark::DoNotOptimize(resident.data());
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
    spank::JobLogOptions options;
    options.lock_folder = root.string();  // as the plugin does: the record root
    const std::string problem = spank::append_to_log(log, out, options) +
                                spank::remove_step_folder(root.string(), "4242.0.0");
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
