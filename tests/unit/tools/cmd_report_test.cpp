// `stoker report` end to end: the built binary over a job log as the plugin writes it (lines
// made with the same to_json), with broken lines among them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report_page.hpp"
#include "run_command.hpp"
#include "stoker/record/run_record.hpp"
#include "temp_tree.hpp"

namespace stoker {
namespace {

using nlohmann::json;

JobLogLine line(const std::string& job, const std::string& user, const std::string& part,
                uint64_t rank, double wait, double at_max, const std::string& time) {
  RunRecord r;
  r.job = job;
  r.step = "0";
  r.node = rank < 2 ? "n1" : "n2";
  r.rank = rank;
  r.plan.local_rank = static_cast<int>(rank % 2);
  r.plan.local_size = 2;
  r.plan.profile = "cv";
  r.plan.cpus = CpuSet::parse(rank % 2 ? "1" : "0");
  r.plan.main_cpus = r.plan.cpus;
  r.plan.worker_cpus = r.plan.cpus;
  r.plan.numa = {0};
  r.plan.workers = r.workers = 1;
  r.plan.prefetch = 4;
  r.plan.prefetch_max = r.prefetch_max = 8;
  r.budget_depth = 14;
  r.prefetch_max_reason = "room to grow: 2 x prefetch 4, lowered to MaxPrefetch=8";
  r.samples = 1000;
  r.seconds = 10;
  r.samples_per_s = 100;
  r.wait_share = wait;
  r.at_max_share = at_max;
  r.depth_reached = 8;
  r.end = "close";
  for (int i = 1; i <= 10; ++i) r.timeline.push_back({i * 1.0, wait, 4 + i % 5});
  return {time, job, "0", r.node, user, part, rank, "ok", "", r};
}

class ReportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::stoker_cli()))
      GTEST_SKIP() << test::stoker_cli() << " is not built (build the `stoker` target)";
    std::string text;
    for (uint64_t r = 0; r < 4; ++r)
      text += to_json(line("101", "alice", "gpu", r, 0.10, 0.1, "2026-12-01T10:00:00Z")) + "\n";
    text += "{\"time\":\"2026-12-01T10:00:01Z\", this line was cut\n";  // line 5
    for (uint64_t r = 0; r < 2; ++r)
      text += to_json(line("102", "bob", "debug", r, 0.41, 0.71, "2026-12-02T10:00:00Z")) + "\n";
    JobLogLine missing = line("102", "bob", "debug", 2, 0, 0, "2026-12-02T10:00:00Z");
    missing.record.reset();
    missing.status = "missing";
    missing.problem = "/run/stoker/records/102.0/rank-2.json: no record";
    text += to_json(missing) + "\n";
    text += "not json at all\n";  // line 9
    text += to_json(line("103", "alice", "gpu", 0, 0.02, 0.0, "2026-12-02T11:00:00Z")) + "\n";
    tree.write("jobs.jsonl", text);
  }
  test::CommandResult report(const std::string& args) {
    return test::run_command(test::stoker_cli() + " report --log " + tree.path("jobs.jsonl") + " " +
                             args);
  }
  test::TempTree tree;
};

// The faults family's name for the same fixture (tests/CMakeLists.txt: suites named Faults*).
using FaultsReportCommand = ReportCommand;

TEST_F(ReportCommand, HighestWaitFirstWithThePlanAndTheChange) {
  const auto r = report("2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t first = r.out.find("job 102 step 0"), second = r.out.find("job 101 step 0");
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_LT(first, second) << r.out;
  EXPECT_NE(r.out.find("depth sat at prefetch_max 8 for 71 % of the run, 41 % wait: the budget "
                       "allows 14; raise MaxPrefetch in profile cv"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rank 2: missing: /run/stoker/records/102.0/rank-2.json"),
            std::string::npos);
  EXPECT_NE(r.out.find("2 broken line(s) skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Per user and partition"), std::string::npos);
}

TEST_F(FaultsReportCommand, BrokenLinesAreOneLineEachNamingFileAndLine) {
  const auto r = report("2>&1 >/dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(tree.path("jobs.jsonl") + ":5: is not valid JSON"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(tree.path("jobs.jsonl") + ":9: is not valid JSON"), std::string::npos);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
}

TEST_F(ReportCommand, FiltersAndJson) {
  auto steps = [&](const std::string& args) {
    const auto r = report("--json " + args + " 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.out;
    std::vector<std::string> jobs;
    const json doc = json::parse(r.out);
    for (const json& s : doc["steps"]) jobs.push_back(s["job"]);
    return jobs;
  };
  EXPECT_EQ(steps(""), (std::vector<std::string>{"102", "101", "103"}));
  EXPECT_EQ(steps("--user alice"), (std::vector<std::string>{"101", "103"}));
  EXPECT_EQ(steps("--partition debug"), (std::vector<std::string>{"102"}));
  EXPECT_EQ(steps("--job 103"), (std::vector<std::string>{"103"}));
  EXPECT_EQ(steps("--since 2026-12-02"), (std::vector<std::string>{"102", "103"}));
  const json doc = json::parse(report("--json 2>/dev/null").out);
  EXPECT_EQ(doc["broken_lines"], 2);
  EXPECT_EQ(doc["steps"][0]["plan"]["prefetch_max"], 8);
  EXPECT_EQ(doc["groups"][0]["user"], "bob");
}

TEST_F(ReportCommand, HtmlIsOneSelfContainedPageWithPlotsAndNodePictures) {
  const std::string page = tree.path("report.html");
  const auto r = report("--html " + page + " 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("HTML report: " + page), std::string::npos);
  std::ifstream in(page);
  std::stringstream s;
  s << in.rdbuf();
  const std::string html = s.str();
  EXPECT_NE(html.find("Job 102 step 0: input wait 41 %"), std::string::npos);
  EXPECT_NE(html.find("class=\"point\""), std::string::npos);  // a plot with points
  EXPECT_NE(html.find("ring depth"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const char* fetch : {"src=", "href=\"http", "url(", "@import"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
}

TEST_F(FaultsReportCommand, AMissingLogIsOneClearError) {
  const auto r =
      test::run_command(test::stoker_cli() + " report --log " + tree.path("nope.jsonl") + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(tree.path("nope.jsonl") + ": cannot be read"), std::string::npos) << r.out;
  EXPECT_NE(report("--since yesterday 2>&1").out.find("--since 'yesterday'"), std::string::npos);
}

// The page's second read takes only the bytes between a shown step's first and last line:
// a step whose ranks' lines lie far apart (other steps ended between them) still gets every
// rank's plot, as when its lines are side by side.
TEST(ReportPage, AStepsLinesFarApartAllReachItsPlot) {
  if (!std::filesystem::exists(test::stoker_cli())) GTEST_SKIP() << "stoker is not built";
  test::TempTree tree;
  auto polylines = [&](bool apart, bool second_rank = true) {
    std::string text =
        to_json(line("201", "carol", "gpu", 0, 0.9, 0.5, "2026-12-02T10:00:00Z")) + "\n";
    for (int job = 300; apart && job < 2300; ++job)
      text +=
          to_json(line(std::to_string(job), "dan", "gpu", 0, 0.1, 0.0, "2026-12-02T10:00:01Z")) +
          "\n";
    if (second_rank)
      text += to_json(line("201", "carol", "gpu", 1, 0.8, 0.5, "2026-12-02T10:00:02Z")) + "\n";
    tree.write("jobs.jsonl", text);
    const auto r = test::run_command(test::stoker_cli() + " report --top 1 --log " +
                                     tree.path("jobs.jsonl") + " --html " + tree.path("p.html"));
    EXPECT_EQ(r.status, 0) << r.out;
    return test::polylines_of(test::read_page(tree.path("p.html")));
  };
  const size_t side_by_side = polylines(false);
  EXPECT_EQ(side_by_side, polylines(false, false) + 1);  // a line per rank
  EXPECT_EQ(polylines(true), side_by_side);
}

}  // namespace
}  // namespace stoker
