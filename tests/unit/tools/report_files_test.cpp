// `stoker report --log` over the plugin's job_log= folder (one file per node: the only safe
// log on NFS), logrotate's rotated and compressed files beside them, several --log at once,
// and a node file cut mid-line: one log, each broken line named by its own file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "report_page.hpp"
#include "run_command.hpp"
#include "stoker/record/run_record.hpp"
#include "temp_tree.hpp"

namespace stoker {
namespace {

using nlohmann::json;

// Rank `rank`'s line of job `job`, step 0, on `node`.
std::string line(const std::string& job, uint64_t rank, const std::string& node, double wait) {
  RunRecord r;
  r.job = job;
  r.step = "0";
  r.node = node;
  r.rank = rank;
  r.plan.profile = "cv";
  r.plan.cpus = r.plan.main_cpus = r.plan.worker_cpus = CpuSet::parse("0");
  r.plan.numa = {0};
  r.plan.workers = r.workers = 1;
  r.plan.prefetch = 4;
  r.plan.prefetch_max = r.prefetch_max = r.budget_depth = 8;
  r.samples = 1000;
  r.seconds = 10;
  r.samples_per_s = 100;
  r.wait_share = wait;
  r.depth_reached = 8;
  r.end = "close";
  for (int i = 1; i <= 4; ++i) r.timeline.push_back({i * 1.0, wait, 4});
  return to_json(JobLogLine{"2026-12-0" + job.substr(2) + "T10:00:00Z", job, "0", node, "alice",
                            "gpu", rank, "ok", "", r}) +
         "\n";
}

class FaultsReportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::stoker_cli())) GTEST_SKIP() << "stoker is not built";
    // Job 203 ran on both nodes; n2's file was cut in the middle of its last line.
    tree.write("logs/n1.jsonl", line("203", 0, "n1", 0.3) + line("203", 1, "n1", 0.3));
    std::string n2 = line("203", 2, "n2", 0.3) + line("203", 3, "n2", 0.3);
    tree.write("logs/n2.jsonl", n2.substr(0, n2.size() - 40));
    // What logrotate left: job 202 in n1's first rotation, job 201 compressed in n2's second.
    tree.write("logs/n1.jsonl.1", line("202", 0, "n1", 0.2) + line("202", 1, "n1", 0.2));
    tree.write("logs/n2.jsonl.2", line("201", 2, "n2", 0.5) + line("201", 3, "n2", 0.5));
    const auto gz = test::run_command("gzip " + tree.path("logs/n2.jsonl.2"));
    ASSERT_EQ(gz.status, 0) << gz.out;
    tree.write("logs/README", "not a log\n");
    tree.write("single.jsonl", line("200", 0, "n3", 0.9));
  }
  test::CommandResult report(const std::string& args) {
    return test::run_command(test::stoker_cli() + " report " + args);
  }
  // Each step of the --json report: job -> ranks.
  std::map<std::string, int> ranks(const std::string& logs) {
    const auto r = report(logs + " --json 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.out;
    std::map<std::string, int> out;
    const json doc = json::parse(r.out);
    for (const json& s : doc["steps"]) out[s["job"].get<std::string>()] = s["ranks"].get<int>();
    return out;
  }
  test::TempTree tree;
};

TEST_F(FaultsReportFiles, AFolderOfNodeFilesWithRotatedAndCompressedOnesIsOneLog) {
  EXPECT_EQ(ranks("--log " + tree.path("logs")),
            (std::map<std::string, int>{{"201", 2}, {"202", 2}, {"203", 3}}));
  const auto err = report("--log " + tree.path("logs") + " 2>&1 >/dev/null");
  EXPECT_EQ(err.out.rfind("stoker report: " + tree.path("logs/n2.jsonl") +
                              ":2: is not valid JSON (cut short or garbled)",
                          0),
            0u)
      << err.out;
  EXPECT_EQ(std::count(err.out.begin(), err.out.end(), '\n'), 1) << err.out;
}

TEST_F(FaultsReportFiles, SeveralLogsAreReadAsOne) {
  EXPECT_EQ(ranks("--log " + tree.path("logs") + " --log " + tree.path("single.jsonl")),
            (std::map<std::string, int>{{"200", 1}, {"201", 2}, {"202", 2}, {"203", 3}}));
}

// The page reads the steps' lines again by offset, across the files taken end to end: the
// step spread over two node files gets as many rank plots as from one file holding the same
// lines.
TEST_F(FaultsReportFiles, ThePageFindsEveryRankOfAStepSpreadOverNodeFiles) {
  auto polylines = [&](const std::string& logs) {
    const std::string page = tree.path("report.html");
    const auto r = report("--job 203 --top 1 " + logs + " --html " + page + " 2>/dev/null");
    EXPECT_EQ(r.status, 0) << r.out;
    return test::polylines_of(test::read_page(page));
  };
  const auto cat = test::run_command("cat " + tree.path("logs/n1.jsonl") + " " +
                                     tree.path("logs/n2.jsonl") + " > " + tree.path("one.jsonl"));
  ASSERT_EQ(cat.status, 0);
  const size_t one_file = polylines("--log " + tree.path("one.jsonl"));
  EXPECT_GT(one_file, 0u);
  EXPECT_EQ(polylines("--log " + tree.path("logs")), one_file);
}

TEST_F(FaultsReportFiles, AFolderWithoutLogsOrABadGzIsOneClearError) {
  tree.write("empty/README", "x\n");
  auto r = report("--log " + tree.path("empty") + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(tree.path("empty") + ": holds no log file"), std::string::npos) << r.out;
  // A compressed file cut short (a copy that did not finish).
  tree.write("bad/README", "x\n");
  const auto cut = test::run_command("gzip -c " + tree.path("single.jsonl") + " | head -c 40 > " +
                                     tree.path("bad/n1.jsonl.3.gz"));
  ASSERT_EQ(cut.status, 0);
  r = report("--log " + tree.path("bad") + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("n1.jsonl.3.gz: cannot be unpacked"), std::string::npos) << r.out;
}

// A job log of record format v1, written by the landed runtime (tests/support/data/README.md),
// reports as that runtime's `stoker report` reported it, and in --json beside a v2 step.
TEST_F(FaultsReportFiles, AVersion1LogStillReports) {
  const std::string v1 = std::string(STOKER_SOURCE_DIR) + "/tests/support/data/job-log-v1.jsonl";
  const auto text = report("--log " + v1);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("job 4242 step 0  user alice  partition gpu  2 rank(s) on n1"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("plan: profile balanced: 2 cores (0-1), 2 workers, prefetch 2..8 "
                          "(depth reached 2), not pinned"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(ranks("--log " + v1 + " --log " + tree.path("single.jsonl")),
            (std::map<std::string, int>{{"200", 1}, {"4242", 2}}));
  const json doc = json::parse(report("--log " + v1 + " --json").out);
  const json& plan = doc["steps"][0]["plan"];
  EXPECT_EQ(plan["pin_memory"], false);
  EXPECT_EQ(plan["pin"], false) << "the old name, kept for one release";
  EXPECT_EQ(plan["worker_cpus"], "1");
  EXPECT_EQ(doc["steps"][0]["worst_rank"]["samples"], 3124);
}

}  // namespace
}  // namespace stoker
