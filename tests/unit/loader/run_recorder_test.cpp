// The run record the loader leaves for the plugin: the fixed-size timeline, the record made
// from a real loader's stats, and its three moments (close, exit, SIGTERM), once each
// process. Each recorder test runs in a forked child: the record is once per process.
#include <signal.h>

#include <fstream>
#include <sstream>

#include "child_process.hpp"
#include "loader_fixture.hpp"
#include "scoped_env.hpp"
#include "stoker/loader/run_recorder.hpp"
#include "stoker/loader/run_timeline.hpp"

using namespace stoker;

namespace {

constexpr uint64_t kSecond = 1'000'000'000;

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Iterates one epoch of a loader made for this process with the record folder set.
std::unique_ptr<Loader> loader_with_record(const test::TokenSetup& t) {
  LoaderOptions o = test::test_options(8, 2);
  auto loader = Loader::for_this_process(t.source, t.copy, o);
  for (Batch& b : *loader) (void)b;
  return loader;
}

}  // namespace

TEST(RunTimeline, KeepsAFixedNumberOfPointsWhateverTheRunLength) {
  RunTimeline tl;
  // 600 s of batches every 10 ms, waiting 5 ms on each in the first half: share 0.5, then 0.
  for (uint64_t t = 0; t < 600 * kSecond; t += 10'000'000)
    tl.observe(t, t < 300 * kSecond ? 5'000'000 : 0, 4, 8);
  EXPECT_LE(tl.points(), RunTimeline::kPoints);
  EXPECT_GE(tl.points(), RunTimeline::kPoints / 2);
  EXPECT_NEAR(tl.wait_share(0), 0.5, 0.01);
  EXPECT_NEAR(tl.wait_share(tl.points() - 1), 0.0, 1e-9);
  EXPECT_EQ(tl.deepest(), 4);
  EXPECT_EQ(tl.at_max_ns(), 0u);  // never at max depth 8
}

TEST(RunTimeline, CountsTheTimeAtTheMaxDepth) {
  RunTimeline tl;
  tl.observe(0, 0, 2, 8);
  tl.observe(1 * kSecond, 0, 2, 8);  // depth 2 for the first second
  tl.observe(4 * kSecond, 0, 8, 8);  // depth 8 for the next three
  EXPECT_EQ(tl.at_max_ns(), 3 * kSecond);
  EXPECT_EQ(tl.deepest(), 8);
}

TEST(RunRecorder, WritesTheRecordAtLoaderClose) {
  test::TokenSetup t;
  test::TempDir dir;
  const test::ChildResult r = test::run_in_child([&](FILE* out) {
    test::ScopedEnv env;
    env.set(kRunRecordDirVar, dir.file("").c_str());
    env.set("SLURM_JOB_ID", "77");
    env.set("SLURM_STEP_ID", "0");
    env.set("SLURMD_NODENAME", "n9");
    loader_with_record(t).reset();
    const std::string text = read_text(dir.file(run_record_file(0)));
    const RunRecord rec = parse_run_record(text, "the record");
    std::fprintf(out, "%s", text.c_str());
    return rec.job == "77" && rec.node == "n9" && rec.end == "close" && rec.samples == 1000 &&
                   rec.workers == 2 && rec.plan.profile == "test" && rec.prefetch_max == 8 &&
                   rec.budget_depth > 0 && !rec.timeline.empty()
               ? 0
               : 1;
  });
  EXPECT_EQ(r.status, 0) << r.describe();
}

TEST(RunRecorder, WritesOnceAtExitWhenTheLoaderIsStillAlive) {
  test::TokenSetup t;
  test::TempDir dir;
  const test::ChildResult r = test::run_in_child([&](FILE*) -> int {
    test::ScopedEnv env;
    env.set(kRunRecordDirVar, dir.file("").c_str());
    static std::unique_ptr<Loader> kept;  // alive at exit, as in a Python script
    kept = loader_with_record(t);
    std::exit(3);  // runs the atexit hooks
  });
  ASSERT_EQ(r.status, 3) << r.describe();
  const RunRecord rec = parse_run_record(read_text(dir.file(run_record_file(0))), "record");
  EXPECT_EQ(rec.end, "exit");
}

TEST(RunRecorder, WritesOnSigtermThenDiesOfIt) {
  test::TokenSetup t;
  test::TempDir dir;
  const test::ChildResult r = test::run_in_child([&](FILE*) {
    test::ScopedEnv env;
    env.set(kRunRecordDirVar, dir.file("").c_str());
    auto loader = loader_with_record(t);
    ::kill(::getpid(), SIGTERM);
    for (int i = 0; i < 1000; ++i) ::usleep(10000);  // the signal ends it before this does
    return 4;
  });
  EXPECT_EQ(r.signal, SIGTERM) << r.describe();
  const RunRecord rec = parse_run_record(read_text(dir.file(run_record_file(0))), "record");
  EXPECT_EQ(rec.end, "sigterm");
  EXPECT_EQ(rec.samples, 1000u);
}

TEST(RunRecorder, HandsSigtermToTheHandlerInstalledBefore) {
  test::TokenSetup t;
  test::TempDir dir;
  static volatile sig_atomic_t handled = 0;
  const test::ChildResult r = test::run_in_child([&](FILE*) {
    ::signal(SIGTERM, [](int) { handled = 1; });
    test::ScopedEnv env;
    env.set(kRunRecordDirVar, dir.file("").c_str());
    auto loader = loader_with_record(t);
    ::kill(::getpid(), SIGTERM);
    for (int i = 0; i < 500 && !handled; ++i) ::usleep(10000);
    return handled ? 0 : 1;
  });
  EXPECT_EQ(r.status, 0) << r.describe();
  EXPECT_EQ(parse_run_record(read_text(dir.file(run_record_file(0))), "record").end, "sigterm");
}

TEST(FaultsRunRecorder, AFolderThatCannotBeWrittenIsOneLineNotAFailure) {
  test::TokenSetup t;
  const test::ChildResult r = test::run_in_child([&](FILE* out) {
    test::ScopedEnv env;
    env.set(kRunRecordDirVar, "/nonexistent/stoker-records");
    ::dup2(::fileno(out), STDERR_FILENO);
    loader_with_record(t).reset();  // no exception, no crash
    return 0;
  });
  EXPECT_EQ(r.status, 0) << r.describe();
  EXPECT_NE(r.out.find("cannot write the run record /nonexistent/stoker-records/rank-0.json"),
            std::string::npos)
      << r.out;
  // What to do is about the record folder (a container's /run lacks it), not STOKER_METRICS.
  EXPECT_NE(r.out.find("(the plugin's record folder (STOKER_RUN_RECORD_DIR) must be reachable: "
                       "in a container, mount it"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("STOKER_METRICS"), std::string::npos) << r.out;
}
