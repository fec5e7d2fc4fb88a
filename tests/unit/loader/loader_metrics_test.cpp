// A real Loader over a real token file with STOKER_METRICS set: the file the writer keeps
// rewriting while batches flow is read back, parsed strictly, and checked for plausible
// values; the exit summary line carries the same numbers.
#include <fstream>
#include <sstream>
#include <thread>

#include "../doctor/doctor_fixture.hpp"
#include "../loader/loader_fixture.hpp"
#include "prom_parser.hpp"
#include "stoker/loader/metrics.hpp"

namespace stoker {
namespace {

using namespace std::chrono_literals;
using test::EnvGuard;
using test::TempDir;

using test::slurp;

TEST(LoaderMetrics, FileFollowsARealLoader) {
  TempDir dir;
  const uint64_t seq = 64;
  auto source = std::make_shared<TokenFileSource>(test::write_tokens(dir, 64 * 4000 + 1), seq);
  auto transform = std::make_shared<CopyTransform>(source->spec());
  const int workers = 2;
  Loader loader(source, transform, test::test_options(16, workers, 2));

  const std::string path = dir.file("stoker.prom");
  EnvGuard metrics("STOKER_METRICS", path);
  EnvGuard interval("STOKER_METRICS_INTERVAL", "0.1");
  EnvGuard job("SLURM_JOB_ID", "1234");
  EnvGuard step("SLURM_STEP_ID", "0");
  auto writer = MetricsWriter::from_environment([&loader] { return loader.stats(); }, 0);
  ASSERT_NE(writer, nullptr);

  // Consume slowly enough that the writer rewrites the file while batches flow.
  uint64_t batches = 0;
  double mid_samples = -1;
  for (Batch& b : loader) {
    ASSERT_GT(b.size(), 0u);
    std::this_thread::sleep_for(2ms);
    if (++batches == 150) {
      test::PromFile mid = test::parse_prometheus(slurp(path));
      mid_samples = mid.value("stoker_samples_total");
    }
  }
  ASSERT_EQ(batches, loader.batches_per_epoch());
  EXPECT_GT(mid_samples, 0) << "no rewrite during the epoch";
  EXPECT_LT(mid_samples, static_cast<double>(loader.length()));

  writer->stop();
  EXPECT_GE(writer->writes(), 3u);
  EXPECT_EQ(writer->failures(), 0u);
  const LoaderStats stats = loader.stats();
  test::PromFile f = test::parse_prometheus(slurp(path));
  for (const auto& s : f.samples) {
    EXPECT_EQ(s.labels.at("job_id"), "1234");
    EXPECT_EQ(s.labels.at("step_id"), "0");
    EXPECT_EQ(s.labels.at("rank"), "0");
  }
  EXPECT_EQ(f.value("stoker_samples_total"), static_cast<double>(loader.length()));
  EXPECT_EQ(f.value("stoker_batches_total"), static_cast<double>(batches));
  EXPECT_EQ(f.value("stoker_bytes_total"), static_cast<double>(loader.length() * (seq + 1) * 2));
  EXPECT_GT(f.value("stoker_samples_per_second"), 0);
  EXPECT_GT(f.value("stoker_bytes_per_second"), 0);
  EXPECT_GE(f.value("stoker_prefetch_depth_batches"), 1);
  EXPECT_GE(f.value("stoker_prefetch_max_batches"), f.value("stoker_prefetch_depth_batches"));
  EXPECT_EQ(f.value("stoker_workers"), workers);
  double share = f.value("stoker_consumer_wait_ratio");
  EXPECT_GE(share, 0);
  EXPECT_LE(share, 1);
  EXPECT_GT(f.value("stoker_stage_seconds_total", {{"stage", "collate"}}), 0);
  EXPECT_GT(f.value("stoker_wall_seconds_total"), 0.3);  // 250 batches x 2 ms at least

  std::string line = summary_line(stats, 0);
  EXPECT_NE(line.find(std::to_string(loader.length()) + " samples"), std::string::npos) << line;
  EXPECT_NE(line.find(std::to_string(workers) + " workers"), std::string::npos) << line;
}

}  // namespace
}  // namespace stoker
