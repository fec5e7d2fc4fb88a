// The table of what a run measures (stoker/record/run_measures.hpp) against its writers: every
// row has one name, Prometheus carries each exported row with its value and help, the run
// record each recorded row, and the reference page has a row for each.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "prom_parser.hpp"
#include "stoker/loader/measure_values.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/loader/run_recorder.hpp"

using namespace stoker;

namespace {

// Every counter of its own value, so that a row reading another's field shows.
LoaderStats distinct_stats() {
  LoaderStats s{.stages = {1'500'000'000, 3'000'000'000, 250'000'000, 125'000'000},
                .produce_ns = 4'875'000'000,
                .consumer_wait_ns = 500'000'000,
                .wall_ns = 2'000'000'000,
                .wait_share = 0.25,
                .samples = 6400,
                .batches = 200,
                .bytes = 13120000,
                .skipped = 3,
                .skipped_files = {},
                .decode_warnings = 5,
                .discarded_batches = 2,
                .stream_reads = {11, 12345, 4096},
                .workers = 7,
                .threads_created = 8,
                .depth = 6,
                .max_depth = 16,
                .slots = 18,
                .slot_bytes = 1 << 20,
                .arena_bytes = 18 << 20,
                .mem_budget = 1 << 30,
                .numa_bound = true,
                .depth_history = {},
                .timeline = {},
                .producer_bound_waits = 9,
                .epoch_first_batch = {},
                .notes = {},
                .agreement = {}};
  s.timeline.observe(1'000'000'000, 0, 16, 16);
  return s;
}

}  // namespace

TEST(RunMeasures, EveryMeasureHasOneRowAndOneName) {
  std::set<std::string> names, stats_keys;
  for (int id = 0; id <= static_cast<int>(Measure::Adaptive); ++id) {
    const MeasureRow& row = measure_row(static_cast<Measure>(id));
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_NE(std::string(row.help), "") << row.name;
    if (row.stats) {
      const std::string key = std::string(row.group ? row.group : "") + "/" + row.stats;
      EXPECT_TRUE(stats_keys.insert(key).second) << key;
    }
    EXPECT_EQ(row.prom != nullptr, row.prom_type != nullptr) << row.name;
  }
  EXPECT_EQ(names.size(), run_measures().size());
}

TEST(RunMeasures, PrometheusCarriesEachExportedRowWithItsValueAndHelp) {
  const LoaderStats s = distinct_stats();
  const test::PromFile f = test::parse_prometheus(prometheus_text(s, {"1", "0", "0", "n1"}, 7));
  size_t exported = 0;
  for (const MeasureRow& row : run_measures()) {
    if (!row.prom) continue;
    ++exported;
    std::map<std::string, std::string> match;
    if (row.prom_label) {
      const std::string label = row.prom_label;  // stage="read"
      const size_t eq = label.find('=');
      match[label.substr(0, eq)] = label.substr(eq + 2, label.size() - eq - 3);
    }
    EXPECT_DOUBLE_EQ(f.value(row.prom, match),
                     measure_in_base_unit(measure_value(s, row.id), row.unit))
        << row.name;
    EXPECT_EQ(f.help.at(row.prom), row.help) << row.name;
    EXPECT_EQ(f.type.at(row.prom), row.prom_type) << row.name;
  }
  // and one series of the file's own: when it was written
  EXPECT_EQ(f.samples.size(), exported + 1);
}

TEST(RunMeasures, TheRecordHoldsEachRecordedRow) {
  const LoaderStats s = distinct_stats();
  Plan plan;
  plan.profile = "cv";
  const RunRecord r = make_run_record(s, plan, {"", "1", "0", "n1", 0}, "close");
  const nlohmann::json j = nlohmann::json::parse(to_json(r));
  for (const MeasureRow& row : run_measures()) {
    if (row.record.index() == 0) {
      EXPECT_FALSE(j.contains(row.name)) << row.name;
      continue;
    }
    ASSERT_TRUE(j.contains(row.name)) << row.name;
    EXPECT_DOUBLE_EQ(j[row.name].get<double>(),
                     measure_in_base_unit(measure_value(s, row.id), row.unit))
        << row.name;
  }
  EXPECT_EQ(parse_run_record(to_json(r), "x"), r);
}

// docs/reference.md, "What a run measures": a row for each quantity, with its stats() key and
// its series. The page is generated (ctest docs.reference); this holds it to the table's rows
// whatever its generator does.
TEST(RunMeasures, TheReferencePageHasEveryRow) {
  const std::string page = test::slurp(std::string(STOKER_SOURCE_DIR) + "/docs/reference.md");
  const size_t at = page.find("\n## What a run measures\n");
  ASSERT_NE(at, std::string::npos) << "docs/reference.md lacks its section What a run measures";
  const std::string part = page.substr(at, page.find("\n## ", at + 1) - at);
  for (const MeasureRow& row : run_measures()) {
    const size_t line = part.find(std::string("\n| `") + row.name + "` |");
    ASSERT_NE(line, std::string::npos) << row.name << ": no row on docs/reference.md";
    const std::string text = part.substr(line, part.find('\n', line + 1) - line);
    for (const char* name : {row.stats, row.prom, row.old_stats}) {
      if (!name) continue;
      EXPECT_NE(text.find(name), std::string::npos) << row.name << ": " << name;
    }
  }
  // and the metrics file's own series
  EXPECT_NE(part.find("`stoker_last_write_timestamp_seconds`"), std::string::npos);
}
