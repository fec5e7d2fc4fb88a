// Which jobs are tuned (opt-in, always, never, --stoker=off), batch scripts with
// #SBATCH --stoker lines, and the fail-safe: broken admin files never break jobs.
#include <string>

#include "cluster_harness.hpp"

namespace stoker::test {
namespace {

class Modes : public ClusterTest {
 protected:
  // Ranks of `srun -N1 -n2 <flags> probe` that got a plan.
  int tuned_ranks(const std::string& flags) {
    const RunResult r = run("srun -N1 -n2 " + flags + " " + probe());
    EXPECT_EQ(r.rc, 0) << flags << ": " << r.err;
    int tuned = 0;
    for (const auto& [rank, env] : parse_probe(r.out)) tuned += env.count("STOKER_PLAN_VERSION");
    return tuned;
  }
};

TEST_F(Modes, OptInTunesOnlyJobsWithAFlag) {
  use_plugin(default_args());  // enable=opt-in
  EXPECT_EQ(tuned_ranks(""), 0);
  EXPECT_EQ(tuned_ranks("--stoker"), 2);
  EXPECT_EQ(tuned_ranks("--stoker-workers=1"), 2);
  EXPECT_EQ(tuned_ranks("--stoker=off"), 0);
}

TEST_F(Modes, AlwaysTunesEveryJobButStokerOff) {
  use_plugin("profiles=" + profiles_file().string() + " enable=always");
  EXPECT_EQ(tuned_ranks(""), 2);
  EXPECT_EQ(tuned_ranks("--stoker=on"), 2);
  EXPECT_EQ(tuned_ranks("--stoker=off"), 0);
}

TEST_F(Modes, NeverTunesButAcceptsTheFlags) {
  use_plugin("enable=never");
  EXPECT_EQ(tuned_ranks("--stoker --stoker-workers=2"), 0);
}

TEST_F(Modes, VerboseSaysWhyATaskIsNotTuned) {
  const RunResult r = run("srun -N1 -n1 --stoker=off --stoker-verbose true");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.err.find("stoker: rank 0: not tuned: --stoker=off"), std::string::npos) << r.err;
}

TEST_F(Modes, BatchJobWithSbatchLines) {
  write_file(jobs() / "train.sbatch",
             "#!/bin/sh\n"
             "#SBATCH -N2 --ntasks-per-node=2 -o " +
                 (jobs() / "train.out").string() +
                 "\n"
                 "#SBATCH --stoker-profile=cv\n"
                 "#SBATCH --stoker-workers=1\n"
                 "#SBATCH --stoker-prefetch=4\n"
                 "#SBATCH --stoker-verbose\n"
                 "echo batch STOKER_PLAN_VERSION=${STOKER_PLAN_VERSION:-unset}\n"
                 "srun " +
                 probe() + "\n");
  const RunResult r = run("sbatch --wait train.sbatch");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string out = slurp(jobs() / "train.out");
  // batch_step=no (the default): the script itself is not tuned, its steps are.
  EXPECT_NE(out.find("batch STOKER_PLAN_VERSION=unset"), std::string::npos) << out;
  // A switch forwarded from sbatch to the job's steps still parses there.
  EXPECT_EQ(out.find("takes no value"), std::string::npos) << out;
  EXPECT_EQ(count_of(out, "): profile=cv cpus="), 4) << out;  // one plan line per task
  const Probe p = parse_probe(out);
  ASSERT_EQ(p.size(), 4u) << out;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + "\n" + out);
    EXPECT_EQ(env.at("STOKER_PROFILE"), "cv");
    EXPECT_EQ(env.at("STOKER_WORKERS"), "1");
    EXPECT_EQ(env.at("STOKER_PREFETCH"), "4");
  }
}

TEST_F(Modes, BatchStepTunedWhenTheAdminAsks) {
  use_plugin(default_args() + " batch_step=yes");
  const RunResult r = run("sbatch --wait -N1 -n1 --stoker -o " + (jobs() / "bs.out").string() +
                          " --wrap 'echo batch STOKER_PLAN_VERSION=${STOKER_PLAN_VERSION:-unset}'");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string out = slurp(jobs() / "bs.out");
  EXPECT_EQ(out.find("STOKER_PLAN_VERSION=unset"), std::string::npos) << out;
}

// A broken admin file: the job runs, each task says once what was wrong.
void expect_untuned_with_warning(const std::string& what) {
  const RunResult r = ClusterTest::run("srun -N2 -n4 --stoker " + ClusterTest::probe());
  EXPECT_EQ(r.rc, 0) << what << ": " << r.err;
  const Probe p = parse_probe(r.out);
  EXPECT_EQ(p.size(), 4u) << what << ": " << r.out;
  for (const auto& [rank, env] : p) EXPECT_FALSE(env.count("STOKER_PLAN_VERSION")) << what;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(count_of(r.err, "stoker: warning: rank " + std::to_string(rank) + ": "), 1)
        << what << ":\n"
        << r.err;
  }
}

TEST_F(Modes, BrokenProfilesFileLeavesJobsRunning) {
  const fs::path broken = dir() / "broken-profiles.conf";
  write_file(broken, "Profile=cv WorkerFraction=lots\n");
  use_plugin("profiles=" + broken.string() + " enable=opt-in");
  expect_untuned_with_warning("broken profiles file");
  use_plugin("profiles=" + (dir() / "missing-profiles.conf").string());
  expect_untuned_with_warning("missing profiles file");
  use_plugin("profiles=" + dir().string());  // a folder: once read as an empty file
  expect_untuned_with_warning("profiles path that is a folder");
}

TEST_F(Modes, UnreadableTopologyLeavesJobsRunning) {
  const fs::path xml = dir() / "garbage-topology.xml";
  write_file(xml, "<topology>not hwloc</");
  use_plugin(default_args() + " topology_xml=" + xml.string());
  expect_untuned_with_warning("unreadable topology XML");
}

TEST_F(Modes, UnknownGpuIdsLeaveJobsRunning) {
  // The CPU-only XML has no GPUs; the step has two fake ones: ids not found.
  use_plugin_on_a_cpu_only_node();
  const RunResult r = run("srun -N1 -n2 --gres=gpu:2 --stoker " + probe());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "stoker: warning: rank "), 2) << r.err;
  EXPECT_EQ(count_of(r.err, "cannot locate GPU"), 2) << r.err;
  EXPECT_EQ(count_of(r.err, "planning without a GPU"), 0) << "the task is untuned:\n" << r.err;
  const Probe p = parse_probe(r.out);
  EXPECT_EQ(p.size(), 2u) << r.out;
  for (const auto& [rank, env] : p) EXPECT_FALSE(env.count("STOKER_PLAN_VERSION"));
}

TEST_F(Modes, BadPlugstackArgumentDisablesThePlugin) {
  use_plugin(default_args() + " colour=blue");
  const RunResult r = run("srun -N1 -n2 --stoker --stoker-workers=2 " + probe());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("colour=blue"), std::string::npos) << r.err;
  for (const auto& [rank, env] : parse_probe(r.out)) EXPECT_FALSE(env.count("STOKER_PLAN_VERSION"));
  use_plugin(default_args() + " enable=sometimes");
  EXPECT_EQ(run("srun -N1 -n1 --stoker true").rc, 0);
}

}  // namespace
}  // namespace stoker::test
