// Run records on the real cluster: a step's loaders leave one record per rank, the plugin
// collects them after the tasks end into the admin's job_log (one line per rank), and
// `stoker report` reads that log. Faults: a hostile record and a log that cannot be written
// are a line or a message, never a failed step or a drained node.
#include <cstdio>
#include <set>

#include "cluster_harness.hpp"
#include "frozen_filesystem.hpp"
#include "stoker/record/run_record.hpp"

namespace stoker::test {
namespace {

class Records : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped()) return;
    fs::remove_all(root());
    fs::remove(log());
    // A token file outside /tmp (node n2 has a private one): 2000 windows of 64 tokens.
    const RunResult data = run("head -c 260000 /dev/urandom > tokens.bin");
    ASSERT_EQ(data.rc, 0) << data.err;
  }
  static fs::path root() { return dir() / "records"; }
  static fs::path log() { return dir() / "jobs.jsonl"; }
  static void use_records(const std::string& log_path, const std::string& more_args = "") {
    use_plugin(default_args() + " job_log=" + log_path + " record_root=" + root().string() +
               more_args);
  }
  // The loader of `stoker bench tokens` in each task: one epoch, a short step per batch.
  static std::string bench(const std::string& srun_args) {
    return "srun " + srun_args + " " STOKER_CLI " bench tokens " +
           (jobs() / "tokens.bin").string() +
           " --seq-len 64 --epochs 1 --step-ms 1 --json > /dev/null";
  }
  static bool node_drained() {
    return run("sinfo -h -N -o '%N %t' | grep -E 'drain|drng|down'").rc == 0;
  }
};
using FaultsRecords = Records;

TEST_F(Records, ATunedStepLeavesOneLinePerRankAndTheReportShowsIt) {
  use_records(log().string());
  const RunResult r = run(bench("-N 2 -n 2 --stoker-profile=cv"));
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const std::vector<std::string> lines = lines_of(slurp(log()));
  ASSERT_EQ(lines.size(), 2u) << slurp(log());
  std::set<std::string> nodes;
  std::string job;
  for (const std::string& text : lines) {
    EXPECT_LT(text.size(), 4096u);
    const JobLogLine l = parse_job_log_line(text, log().string());
    job = l.job;
    EXPECT_EQ(l.status, "ok") << text;
    ASSERT_TRUE(l.record) << text;
    EXPECT_EQ(l.record->plan.profile, "cv");
    EXPECT_GT(l.record->samples, 0u);
    EXPECT_FALSE(l.record->timeline.empty());
    EXPECT_EQ(l.user, "root");
    nodes.insert(l.node);
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_TRUE(fs::is_empty(root())) << "the step's record folder was left";
  // What the collection cost on each node, from slurmd's log (the figure the 2 ms budget is for).
  const RunResult cost = run("grep -h 'job " + job + " step 0: 1 run record line(s)' " +
                             (dir() / "log").string() + "/slurmd-n*.log");
  EXPECT_EQ(count_of(cost.out, " ms"), 2) << cost.out;
  std::printf("collection per node: %s", cost.out.c_str());
  const RunResult report = run(STOKER_CLI " report --log " + log().string());
  EXPECT_EQ(report.rc, 0) << report.err;
  EXPECT_NE(report.out.find("2 rank(s) on n1,n2"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("suggest: "), std::string::npos) << report.out;
  // The HTML page in headless Chromium (77: Chromium is not installed); the screenshot stays.
  const fs::path html = dir() / "records-report.html", png = dir() / "records-report.png";
  const RunResult page =
      run(STOKER_CLI " report --log " + log().string() + " --html " + html.string() +
          " >/dev/null && " STOKER_SOURCE_DIR "/tests/support/browser_check.py " + html.string() +
          " --screenshot " + png.string() + " --expect-text 'Job " + job +
          " step 0: input wait' --expect-selector 'div.plot svg polyline'");
  if (page.rc != 77) {
    EXPECT_EQ(page.rc, 0) << page.out << page.err;
  }
  std::printf("the report page of job %s: %s\n", job.c_str(), png.c_str());
}

TEST_F(Records, AdminCommentHoldsTheStepsVerdict) {
  use_records(log().string(), " admin_comment=yes");
  ASSERT_EQ(run(bench("-N 2 -n 2 --stoker-profile=cv")).rc, 0);
  const std::vector<std::string> lines = lines_of(slurp(log()));
  ASSERT_FALSE(lines.empty());
  const std::string job = parse_job_log_line(lines.back(), log().string()).job;
  const RunResult shown = run("scontrol -o show job " + job);
  EXPECT_NE(shown.out.find("AdminComment=stoker: job " + job + " rank "), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("for input: "), std::string::npos) << shown.out;
}

TEST_F(FaultsRecords, AHostileRecordIsALineNotAFailedStep) {
  use_records(log().string());
  // Rank 0 replaces its record by a link to a file it should not get read; rank 1 by a FIFO
  // (a reader would block on it) after the loader wrote it.
  const RunResult r =
      run("srun -N 2 -n 2 --stoker-profile=cv bash -c '" STOKER_CLI " bench tokens " +
          (jobs() / "tokens.bin").string() +
          " --seq-len 64 --epochs 1 --json >/dev/null; "
          "f=$STOKER_RUN_RECORD_DIR/rank-$SLURM_PROCID.json;"
          " rm -f $f; if [ $SLURM_PROCID = 0 ]; then ln -s /etc/shadow $f; else mkfifo $f; fi'");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const std::string text = slurp(log());
  EXPECT_EQ(count_of(text, "\"status\":\"bad\""), 2) << text;
  EXPECT_NE(text.find("is a symbolic link: not read"), std::string::npos) << text;
  EXPECT_NE(text.find("is not a regular file"), std::string::npos) << text;
  EXPECT_EQ(text.find("root:"), std::string::npos) << "a line holds /etc/shadow";
  EXPECT_FALSE(node_drained());
}

// Slurm tells srun its tasks ended before it runs spank_fini; collecting there let `srun ...;
// stoker report` miss the step (CI saw an AdminComment not yet set). Each step here is read
// by the same shell the moment srun returns, eight times over.
TEST_F(FaultsRecords, TheStepsLinesAndVerdictAreWrittenBeforeSrunReturns) {
  use_records(log().string(), " admin_comment=yes");
  const std::string step = bench("-N 2 -n 4 --overcommit --stoker-profile=cv");
  const RunResult r =
      run("for i in 1 2 3 4 5 6 7 8; do " + step + " || exit 9; wc -l < " + log().string() +
          "; job=$(tail -1 " + log().string() +
          " | sed 's/.*\"job\":\"\\([0-9]*\\)\".*/\\1/');"
          " scontrol -o show job $job | grep -c \"AdminComment=stoker: job $job rank\"; done");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const std::vector<std::string> seen = lines_of(r.out);
  ASSERT_EQ(seen.size(), 16u) << r.out;
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(seen[2 * i], std::to_string(4 * (i + 1))) << "lines in the log after step " << i;
    EXPECT_EQ(seen[2 * i + 1], "1") << "AdminComment set after step " << i;
  }
}

// job_log= naming a folder: each node appends only to its own <node>.jsonl, the one layout
// that is safe on NFS (two clients appending to one file can overwrite each other's lines).
// Two steps on both nodes end at once; every line lands in its node's file, whole, and the
// report reads the folder as one log.
TEST_F(FaultsRecords, AJobLogFolderGetsOneFilePerNodeAndTheReportReadsIt) {
  const fs::path folder = dir() / "job-logs";
  fs::remove_all(folder);
  use_records(folder.string() + "/");
  const RunResult r = run(bench("-N 2 -n 4 --stoker-profile=cv") + " & " +
                          bench("-N 2 -n 4 --stoker-profile=cv") + " & wait");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  std::set<std::string> jobs;
  for (const std::string node : {"n1", "n2"}) {
    const fs::path file = folder / (node + ".jsonl");
    const std::vector<std::string> lines = lines_of(slurp(file));
    EXPECT_EQ(lines.size(), 4u) << file << ":\n" << slurp(file);  // 2 ranks x 2 steps
    for (const std::string& text : lines) {
      const JobLogLine l = parse_job_log_line(text, file.string());
      EXPECT_EQ(l.node, node) << text;
      EXPECT_EQ(l.status, "ok") << text;
      jobs.insert(l.job);
    }
  }
  EXPECT_EQ(jobs.size(), 2u);
  const RunResult report = run(STOKER_CLI " report --log " + folder.string() + " --json");
  EXPECT_EQ(report.rc, 0) << report.err;
  EXPECT_EQ(count_of(report.out, "\"ranks\": 4"), 2) << report.out;
  EXPECT_EQ(report.err, "");
}

TEST_F(FaultsRecords, ALogThatCannotBeWrittenLeavesTheStepRunning) {
  use_records("/nonexistent/stoker/jobs.jsonl");
  const RunResult r = run(bench("-N 2 -n 2 --stoker-profile=cv"));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  const RunResult said = run("grep -h 'cannot open the job log' " + (dir() / "log").string() +
                             "/slurmd-n*.log | tail -2");
  EXPECT_NE(said.out.find("/nonexistent/stoker/jobs.jsonl"), std::string::npos) << said.out;
  EXPECT_FALSE(node_drained());
}

// A step of one rank per node whose tasks make no loader: the plugin still logs a "missing"
// line per rank (the step is tuned). Prints the job id; `timeout` bounds a step that hangs.
std::string step_printing_its_job(const std::string& srun_args) {
  return "timeout 40 srun " + srun_args +
         " --stoker-profile=cv bash -c 'if [ $SLURM_PROCID = 0 ]; then echo $SLURM_JOB_ID; fi'";
}

// slurmd's log lines of both nodes that hold `text`.
std::string slurmd_lines(const std::string& text) {
  return ClusterTest::run("grep -h -F '" + text + "' " + (ClusterTest::dir() / "log").string() +
                          "/slurmd-n*.log || true")
      .out;
}

// A job log folder users may write to (sticky, as /tmp), with names planted by an unprivileged
// user (uid 4242, no account needed): frees any stepd an open FIFO holds when it goes.
struct PlantedFolder {
  fs::path path;
  explicit PlantedFolder(const fs::path& p, const char* mode) : path(p) {
    fs::remove_all(path);
    fs::create_directories(path);
    ClusterTest::run(std::string("chmod ") + mode + " " + path.string());
  }
  // `cmd` run in the folder as the user.
  void as_user(const std::string& cmd) const {
    const RunResult r = ClusterTest::run(
        "cd " + path.string() + " && setpriv --reuid=4242 --regid=4242 --clear-groups " + cmd);
    EXPECT_EQ(r.rc, 0) << cmd << ": " << r.err;
  }
  ~PlantedFolder() {
    // A writer blocked on opening a FIFO (the fault) goes on once someone opens it to read:
    // opened read-write here, which never blocks, and drained of what it wrote.
    ClusterTest::run("for f in " + path.string() +
                     "/*; do [ -p \"$f\" ] || continue; exec 3<>\"$f\"; sleep 0.2;"
                     " dd if=/proc/self/fd/3 iflag=nonblock of=/dev/null 2>/dev/null;"
                     " exec 3<&-; done; true");
    fs::remove_all(path);
  }
};

// FIFOs planted as n1.jsonl and n2.jsonl in a job_log= folder held
// both slurmstepds in task_exit for good (sbatch --wait had not returned after 150 s). In a
// folder others may write without the sticky bit (where NFS with root_squash pushes admins),
// a user can plant or replace any name: the folder is refused, and the step ends at once.
TEST_F(FaultsRecords, AJobLogFolderOthersMayWriteIsRefusedAndTheStepEndsAtOnce) {
  PlantedFolder logs(dir() / "open-logs", "0777");
  logs.as_user("mkfifo n1.jsonl n2.jsonl");
  use_records(logs.path.string() + "/");
  const RunResult r = run(step_printing_its_job("-N 2 -n 2"));
  ASSERT_EQ(r.rc, 0) << "the step did not end (124: it waited on the FIFOs)\n" << r.err;
  const std::string job = lines_of(r.out).at(0);
  const std::string said = slurmd_lines("job " + job + " step 0: " + logs.path.string());
  EXPECT_EQ(count_of(said, "is writable by others"), 2) << said;  // once on each node
  EXPECT_TRUE(fs::is_fifo(logs.path / "n1.jsonl"));
  EXPECT_FALSE(node_drained());
}

// In a sticky folder a user may still plant a name before the node first writes it: a FIFO
// (n1), a link to a root file (n2), and, for a second step, a file of their own (n1). Each is
// refused at once with one error naming it; nothing is written through it.
TEST_F(FaultsRecords, NamesAUserPlantedInAStickyJobLogFolderAreRefusedAtOnce) {
  PlantedFolder logs(dir() / "sticky-logs", "1777");
  const fs::path victim = dir() / "victim.txt";
  write_file(victim, "root's\n");
  logs.as_user("mkfifo n1.jsonl");
  logs.as_user("ln -s " + victim.string() + " n2.jsonl");
  use_records(logs.path.string() + "/");
  const RunResult r = run(step_printing_its_job("-N 2 -n 2"));
  ASSERT_EQ(r.rc, 0) << "the step did not end (124: it waited on the FIFO)\n" << r.err;
  const std::string job = lines_of(r.out).at(0);
  const std::string fifo = slurmd_lines("job " + job + " step 0: " + logs.path.string() + "/n1");
  EXPECT_EQ(count_of(fifo, "is not a regular file"), 1) << fifo;
  const std::string link = slurmd_lines("job " + job + " step 0: " + logs.path.string() + "/n2");
  EXPECT_EQ(count_of(link, "is a symbolic link"), 1) << link;
  EXPECT_EQ(slurp(victim), "root's\n");

  fs::remove(logs.path / "n1.jsonl");
  logs.as_user("sh -c 'echo forged > n1.jsonl'");
  const RunResult again = run(step_printing_its_job("-N 1 -n 1 -w n1"));
  ASSERT_EQ(again.rc, 0) << again.err;
  const std::string job2 = lines_of(again.out).at(0);
  const std::string own = slurmd_lines("job " + job2 + " step 0: " + logs.path.string() + "/n1");
  EXPECT_EQ(count_of(own, "is owned by uid 4242"), 1) << own;
  EXPECT_EQ(slurp(logs.path / "n1.jsonl"), "forged\n");
  EXPECT_FALSE(node_drained());
}

// A job log on a filesystem that stops answering (a hard-mounted NFS whose
// server is away) held slurmstepd in task_exit, in D state, for as long as it was away. Frozen
// here (fsfreeze on a loop-mounted ext4, on n1: n2 has a mount namespace of its own): the step
// ends after the writer's deadline, and slurmd's log says the lines may be missing.
TEST_F(FaultsRecords, AJobLogThatDoesNotAnswerDoesNotHoldTheStep) {
  FrozenFilesystem frozen(dir() / "frozen-nfs");
  if (!frozen.ok()) GTEST_SKIP() << frozen.why_not();
  fs::create_directories(frozen.path() / "logs");
  use_records((frozen.path() / "logs").string() + "/");
  frozen.freeze(std::chrono::seconds(70));  // thawed then at the latest: the stepd goes on
  const RunResult r = run(step_printing_its_job("-N 1 -n 1 -w n1"));
  frozen.thaw();
  ASSERT_EQ(r.rc, 0) << "the step waited on the filesystem (124)\n" << r.err;
  const std::string said = slurmd_lines("job " + lines_of(r.out).at(0) + " step 0: ");
  EXPECT_NE(said.find("did not answer"), std::string::npos) << said;
  EXPECT_FALSE(node_drained());
}

// A rank killed mid-write leaves its writer's temporary, and a task may leave
// anything in its record folder (files, folders, links, a FIFO); the folder then stayed in
// RAM-backed /run. After the step, the record root is empty, and nothing outside was touched.
TEST_F(FaultsRecords, EverythingAStepLeavesInItsRecordFolderIsRemoved) {
  use_records(log().string());
  const fs::path outside = dir() / "outside-records";
  fs::create_directories(outside);
  write_file(outside / "keep", "kept");
  const RunResult r =
      run("srun -N 2 -n 2 --stoker-profile=cv bash -c 'd=$STOKER_RUN_RECORD_DIR;"
          " echo \"{\\\"half\" > $d/rank-$SLURM_PROCID.json.tmp.$$.0; mkdir -p $d/sub/deeper;"
          " echo x > $d/sub/deeper/file; ln -s " +
          outside.string() + " $d/outside; ln -s " + (outside / "keep").string() +
          " $d/sub/keep; mkfifo $d/fifo'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(root())) << "a step's record folder was left";
  EXPECT_EQ(slurp(outside / "keep"), "kept");
  fs::remove_all(outside);
}

// A node whose tasks never started collects its lines at the step's exit,
// where SLURMD_NODENAME in the step's environment is srun's (srun run on another node: here,
// set by hand), not this node's: the line and the per-node file took srun's node's name.
TEST_F(FaultsRecords, AStepWhoseTasksNeverStartedIsLoggedUnderThisNodesName) {
  const fs::path folder = dir() / "exit-logs";
  fs::remove_all(folder);
  use_records(folder.string() + "/");
  // A per-task output file (%t: the node opens it, not srun) that slurmstepd cannot open: its
  // I/O setup fails, and no task is forked.
  const RunResult r =
      run("SLURMD_NODENAME=elsewhere timeout 40 srun -N 1 -n 1 -w n2 -o " +
          (dir() / "no-such-folder" / "out.%t").string() + " --stoker-profile=cv true");
  EXPECT_NE(r.rc, 124) << r.err;
  EXPECT_NE(r.err.find("launch failed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(folder / "elsewhere.jsonl")) << slurp(folder / "elsewhere.jsonl");
  const std::vector<std::string> lines = lines_of(slurp(folder / "n2.jsonl"));
  ASSERT_EQ(lines.size(), 1u) << r.err;
  const JobLogLine l = parse_job_log_line(lines[0], "n2.jsonl");
  EXPECT_EQ(l.node, "n2");
  EXPECT_EQ(l.status, "missing");
  fs::remove_all(folder);
}

}  // namespace
}  // namespace stoker::test
