// The Prometheus text: every family valid and complete for a crafted snapshot, labels
// escaped, and the test's parser itself strict enough to catch broken files.
#include <gtest/gtest.h>

#include "prom_parser.hpp"
#include "stoker/loader/metrics.hpp"

namespace stoker {
namespace {

using test::parse_prometheus;

LoaderStats crafted_stats() {
  LoaderStats s;
  s.samples = 6400;
  s.batches = 200;
  s.bytes = 6400ull * 1025 * 2;
  s.wall_ns = 2'000'000'000;  // 2 s
  s.consumer_wait_ns = 500'000'000;
  s.wait_share = 0.25;
  s.stages.read_ns = 1'500'000'000;
  s.stages.decode_ns = 3'000'000'000;
  s.stages.transform_ns = 250'000'000;
  s.stages.collate_ns = 125'000'000;
  s.produce_ns = 4'875'000'000;
  s.depth = 6;
  s.max_depth = 16;
  s.workers = 7;
  s.skipped = 3;
  s.mem_budget = 1ull << 30;
  return s;
}

constexpr double kWrittenAt = 1796000000.5;  // a Unix time in seconds

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(Prometheus, EveryMetricParsesWithItsValue) {
  MetricLabels l{"4242", "0", "3", "n7"};
  std::string text = prometheus_text(crafted_stats(), l, kWrittenAt);
  test::PromFile f = parse_prometheus(text);
  for (const auto& s : f.samples) {
    EXPECT_EQ(s.name.rfind("stoker_", 0), 0u) << s.name;
    EXPECT_EQ(s.labels.at("jobid"), "4242");   // jobstats' exporters' name: queries join on it
    EXPECT_EQ(s.labels.at("job_id"), "4242");  // the earlier name, kept for one release
    EXPECT_EQ(s.labels.at("step_id"), "0");
    EXPECT_EQ(s.labels.at("rank"), "3");
    EXPECT_EQ(s.labels.at("node"), "n7");
    // `job` and `instance` are Prometheus's own target labels: a file that set them would
    // see them renamed exported_job, exported_instance at the scrape.
    EXPECT_FALSE(s.labels.count("job") || s.labels.count("instance")) << s.name;
    // Prometheus naming: counters end in _total, and only counters do; a 0-1 share is a
    // _ratio; no percent, milliseconds or other scaled units.
    EXPECT_EQ(f.type.at(s.name) == "counter", ends_with(s.name, "_total")) << s.name;
    for (const char* scaled : {"percent", "_ms", "millis", "_kb", "_mb", "share"})
      EXPECT_EQ(s.name.find(scaled), std::string::npos) << s.name;
  }
  EXPECT_EQ(f.value("stoker_samples_total"), 6400);
  EXPECT_EQ(f.value("stoker_batches_total"), 200);
  EXPECT_EQ(f.value("stoker_bytes_total"), 6400.0 * 1025 * 2);
  EXPECT_DOUBLE_EQ(f.value("stoker_samples_per_second"), 3200);
  EXPECT_DOUBLE_EQ(f.value("stoker_bytes_per_second"), 3200.0 * 1025 * 2);
  EXPECT_DOUBLE_EQ(f.value("stoker_consumer_wait_ratio"), 0.25);
  EXPECT_DOUBLE_EQ(f.value("stoker_consumer_wait_seconds_total"), 0.5);
  EXPECT_DOUBLE_EQ(f.value("stoker_wall_seconds_total"), 2);
  EXPECT_EQ(f.value("stoker_prefetch_depth_batches"), 6);
  EXPECT_EQ(f.value("stoker_prefetch_max_batches"), 16);
  EXPECT_EQ(f.value("stoker_workers"), 7);
  EXPECT_EQ(f.value("stoker_samples_skipped_total"), 3);
  EXPECT_EQ(f.value("stoker_memory_budget_bytes"), 1 << 30);
  EXPECT_DOUBLE_EQ(f.value("stoker_stage_seconds_total", {{"stage", "read"}}), 1.5);
  EXPECT_DOUBLE_EQ(f.value("stoker_stage_seconds_total", {{"stage", "decode"}}), 3);
  EXPECT_DOUBLE_EQ(f.value("stoker_stage_seconds_total", {{"stage", "transform"}}), 0.25);
  EXPECT_DOUBLE_EQ(f.value("stoker_stage_seconds_total", {{"stage", "collate"}}), 0.125);
  EXPECT_DOUBLE_EQ(f.value("stoker_produce_seconds_total"), 4.875);
  EXPECT_DOUBLE_EQ(f.value("stoker_last_write_timestamp_seconds"), kWrittenAt);
}

TEST(Prometheus, BeforeTheFirstBatchNothingDividesByZero) {
  test::PromFile f = parse_prometheus(prometheus_text(LoaderStats{}, MetricLabels{}, 0));
  EXPECT_EQ(f.value("stoker_samples_per_second"), 0);
  EXPECT_TRUE(f.samples.front().labels.empty());  // empty labels are left out
}

TEST(Prometheus, LargeCountersStayExact) {
  LoaderStats s = crafted_stats();
  s.bytes = (uint64_t{1} << 60) + 1;  // a double would round this
  std::string text = prometheus_text(s, MetricLabels{"1", "", "", ""}, kWrittenAt);
  EXPECT_NE(text.find("stoker_bytes_total{jobid=\"1\",job_id=\"1\"} 1152921504606846977\n"),
            std::string::npos)
      << text;
}

TEST(Prometheus, LabelValuesAreEscaped) {
  MetricLabels l{"a\"b\\c\nd", "", "0", "n\"1"};
  test::PromFile f = parse_prometheus(prometheus_text(crafted_stats(), l, kWrittenAt));
  EXPECT_EQ(f.samples.front().labels.at("jobid"), "a\"b\\c\nd");
  EXPECT_EQ(f.samples.front().labels.at("job_id"), "a\"b\\c\nd");
  EXPECT_EQ(f.samples.front().labels.at("node"), "n\"1");
  EXPECT_FALSE(f.samples.front().labels.count("step_id"));
}

TEST(Prometheus, ParserRejectsBrokenFiles) {
  const char* bad[] = {
      "stoker_x 1\n",                                                        // no HELP/TYPE
      "# HELP stoker_x h\n# TYPE stoker_x gauge\nstoker_x 1",                // no final newline
      "# HELP stoker_x h\n# TYPE stoker_x gauge\nstoker_x one\n",            // bad value
      "# HELP 1x h\n# TYPE 1x gauge\n1x 1\n",                                // bad name
      "# HELP stoker_x h\n# TYPE stoker_x gauge\nstoker_x{a=\"1} 1\n",       // unterminated
      "# HELP stoker_x h\n# TYPE stoker_x gauge\nstoker_x 1\nstoker_x 2\n",  // series twice
      "# HELP stoker_x h\n# TYPE stoker_x gauge\nstoker_x{a=\"1\"} 1\n"
      "# HELP stoker_y h\n# TYPE stoker_y gauge\nstoker_y 1\nstoker_x{a=\"2\"} 1\n",  // split
      "# HELP stoker_x h\n# TYPE stoker_x gauges\nstoker_x 1\n",                      // bad type
  };
  for (const char* text : bad) EXPECT_THROW(parse_prometheus(text), std::runtime_error) << text;
}

TEST(SummaryLine, OneLineWithTheNumbers) {
  std::string line = summary_line(crafted_stats(), 3);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("stoker rank 3: 200 batches, 6400 samples in 2.0 s (3200 samples/s"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("waited 25.0 %"), std::string::npos) << line;
  EXPECT_NE(line.find("depth 6/16, 7 workers"), std::string::npos) << line;
  EXPECT_NE(line.find("skipped 3 corrupt"), std::string::npos) << line;
}

}  // namespace
}  // namespace stoker
