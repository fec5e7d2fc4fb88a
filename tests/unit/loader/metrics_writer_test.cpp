// The MetricsWriter: atomic rewrites a concurrent reader never sees half of, a period that
// is kept, a final write at stop, and the environment settings.
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "../doctor/doctor_fixture.hpp"
#include "../loader/loader_fixture.hpp"
#include "prom_parser.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/metrics.hpp"

namespace stoker {
namespace {

using namespace std::chrono_literals;
using test::EnvGuard;
using test::TempDir;

using test::slurp;

// A snapshot whose sample count grows by one per call.
MetricsWriter::Snapshot counting(std::atomic<uint64_t>& calls) {
  return [&calls] {
    LoaderStats s;
    s.samples = ++calls;
    s.workers = 2;
    return s;
  };
}

TEST(WriteAtomically, ReplacesAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("m.prom");
  write_file_atomically(path, "a\n", "");
  write_file_atomically(path, "bb\n", "");
  EXPECT_EQ(slurp(path), "bb\n");
  size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string(), path) << "a temporary was left behind";
    ++files;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_THROW(write_file_atomically(dir.file("no/such/dir/m.prom"), "x\n", ""), Error);
}

TEST(MetricsWriter, RewritesEveryIntervalAndOnStop) {
  TempDir dir;
  std::atomic<uint64_t> calls{0};
  const std::string path = dir.file("m.prom");
  MetricsWriter w(path, {"1", "2", "0", "n1"}, counting(calls), 50ms);
  EXPECT_EQ(w.writes(), 1u);  // written once at construction
  std::this_thread::sleep_for(400ms);
  uint64_t during = w.writes();
  EXPECT_GE(during, 3u) << "a 50 ms period over 400 ms";
  EXPECT_LE(during, 10u);
  w.stop();
  EXPECT_EQ(w.writes(), during + 1);  // the final numbers
  w.stop();                           // idempotent
  test::PromFile f = test::parse_prometheus(slurp(path));
  EXPECT_EQ(f.value("stoker_samples_total"), static_cast<double>(calls.load()));
  EXPECT_EQ(w.failures(), 0u);
}

// Reads `path` over and over for 300 ms while writers replace it: every read must parse as
// one whole file. Counts the reads in *reads.
void read_while_written(const std::string& path, int* reads) {
  const auto until = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < until) {
    std::string text = slurp(path);
    ASSERT_NO_THROW(test::parse_prometheus(text)) << text;
    ++*reads;
  }
}

TEST(MetricsWriter, AReaderNeverSeesAPartialFile) {
  TempDir dir;
  std::atomic<uint64_t> calls{0};
  const std::string path = dir.file("m.prom");
  MetricsWriter w(path, {"1", "", "0", ""}, counting(calls), 1ms);
  int reads = 0;
  read_while_written(path, &reads);
  w.stop();
  EXPECT_GT(w.writes(), 20u);
  EXPECT_GT(reads, 20);
}

// Faults: the job's umask and a second writer of the same path (two loaders given one
// STOKER_METRICS) used to hide or break the file node-exporter reads.
TEST(FaultsMetrics, AStrictUmaskStillLeavesTheFileReadableByNodeExporter) {
  TempDir dir;
  const std::string path = dir.file("m.prom");
  const mode_t old = ::umask(077);
  write_file_atomically(path, "a\n", "");
  ::umask(old);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
}

TEST(FaultsMetrics, TwoWritersOfOnePathNeverLeaveABrokenFile) {
  TempDir dir;
  std::atomic<uint64_t> calls{0};
  const std::string path = dir.file("m.prom");
  MetricsWriter a(path, {"1", "", "0", ""}, counting(calls), 1ms);
  MetricsWriter b(path, {"2", "", "0", ""}, counting(calls), 1ms);
  int reads = 0;
  read_while_written(path, &reads);
  a.stop();
  b.stop();
  EXPECT_EQ(a.failures() + b.failures(), 0u);
  EXPECT_GT(reads, 20);
}

// The temporary was opened O_CREAT | O_TRUNC under a name anyone could guess
// (<path>.tmp.<pid>.<n>): a link planted there by another user of the folder (a step folder
// of an earlier job with this id, a shared textfile folder) was written through, and then
// renamed over the file. Temporaries are made fresh (O_EXCL, never a link followed).
TEST(FaultsMetrics, ALinkPlantedUnderATemporarysNameIsNotWrittenThrough) {
  TempDir dir;
  const std::string path = dir.file("rank-0.json");
  const std::string victim = dir.file("victim");
  { std::ofstream(victim) << "kept"; }
  const std::string guess = path + ".tmp." + std::to_string(::getpid()) + ".";
  for (int n = 0; n < 4096; ++n) std::filesystem::create_symlink(victim, guess + std::to_string(n));
  write_file_atomically(path, "the record\n", "");
  EXPECT_EQ(slurp(victim), "kept");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(slurp(path), "the record\n");
}

TEST(MetricsWriter, BadPathFailsAtConstruction) {
  std::atomic<uint64_t> calls{0};
  EXPECT_THROW(MetricsWriter("/nonexistent/dir/m.prom", {}, counting(calls), 1s), Error);
  EXPECT_THROW(MetricsWriter("", {}, counting(calls), 1s), Error);
  EXPECT_THROW(MetricsWriter("/tmp/x.prom", {}, counting(calls), 0s), Error);
}

TEST(MetricsWriter, FromEnvironment) {
  TempDir dir;
  std::atomic<uint64_t> calls{0};
  {
    EnvGuard off("STOKER_METRICS", std::nullopt);
    EXPECT_EQ(MetricsWriter::from_environment(counting(calls)), nullptr);
  }
  EnvGuard on("STOKER_METRICS", dir.file("stoker_{job}_{rank}.prom"));
  EnvGuard job("SLURM_JOB_ID", "77");
  EnvGuard node("SLURMD_NODENAME", "n2");
  EnvGuard step("SLURM_STEP_ID", "1");
  EnvGuard rank("RANK", "5");
  EnvGuard world("WORLD_SIZE", "8");
  {
    EnvGuard bad("STOKER_METRICS_INTERVAL", "soon");
    EXPECT_THROW(MetricsWriter::from_environment(counting(calls)), Error);
    EnvGuard inf("STOKER_METRICS_INTERVAL", "inf");
    EXPECT_THROW(MetricsWriter::from_environment(counting(calls)), Error);
  }
  EnvGuard fast("STOKER_METRICS_INTERVAL", "0.05");
  auto w = MetricsWriter::from_environment(counting(calls));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->path(), dir.file("stoker_77_5.prom"));
  std::this_thread::sleep_for(200ms);
  EXPECT_GE(w->writes(), 2u);
  w.reset();
  test::PromFile f = test::parse_prometheus(slurp(dir.file("stoker_77_5.prom")));
  EXPECT_EQ(f.samples.front().labels.at("job_id"), "77");
  EXPECT_EQ(f.samples.front().labels.at("step_id"), "1");
  EXPECT_EQ(f.samples.front().labels.at("rank"), "5");
  EXPECT_EQ(f.samples.front().labels.at("node"), "n2");
  // Written just now.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(f.value("stoker_last_write_timestamp_seconds"), now, 60);
  // An explicit rank wins over RANK.
  auto w3 = MetricsWriter::from_environment(counting(calls), 3);
  EXPECT_EQ(w3->path(), dir.file("stoker_77_3.prom"));
  w3.reset();
  // Outside Slurm: no job id, and the host's name for the node.
  EnvGuard no_job("SLURM_JOB_ID", std::nullopt);
  EnvGuard no_node("SLURMD_NODENAME", std::nullopt);
  auto local = MetricsWriter::from_environment(counting(calls), 0);
  EXPECT_EQ(local->path(), dir.file("stoker_nojob_0.prom"));
  const MetricLabels labels = MetricLabels::from_environment(0);
  EXPECT_TRUE(labels.job_id.empty());
  EXPECT_FALSE(labels.node.empty());
}

TEST(MetricLabels, RankFallbacks) {
  EnvGuard rank("RANK", std::nullopt);
  EnvGuard world("WORLD_SIZE", std::nullopt);
  {
    EnvGuard procid("SLURM_PROCID", "9");
    EnvGuard ntasks("SLURM_NTASKS", "16");
    EXPECT_EQ(MetricLabels::from_environment().rank, "9");
  }
  EnvGuard procid("SLURM_PROCID", std::nullopt);
  EXPECT_EQ(MetricLabels::from_environment().rank, "0");
}

TEST(Verbose, OnlyOneMeansYes) {
  {
    EnvGuard v("STOKER_VERBOSE", "1");
    EXPECT_TRUE(verbose_from_environment());
  }
  EnvGuard v("STOKER_VERBOSE", "0");
  EXPECT_FALSE(verbose_from_environment());
}

}  // namespace
}  // namespace stoker
