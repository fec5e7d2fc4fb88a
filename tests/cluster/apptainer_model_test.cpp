// Apptainer's environment rules, with bubblewrap standing in for Apptainer (not in Debian 12):
// each task of a tuned step execs `bwrap` into the test image's files (scripts/containers.sh
// image-root: python3 and numpy, nothing of stoker) with the wheel mounted (wheel_share.hpp),
// and the ranks run tests/cluster/container_probe.py there. What is modelled, rule by rule:
//   Apptainer                          bubblewrap here
//   the host's environment passes      bwrap passes its environment (the default)
//   --cleanenv (-e)                    --clearenv (Apptainer keeps a few: HOME, TERM, LANG...)
//   APPTAINERENV_NAME=VALUE            --setenv NAME VALUE
//   the CPU mask passes (one exec)     the same: bwrap execs in the task's process tree
// What differs: no SIF image (an unpacked root, as an Apptainer sandbox), no automatic binds
// ($HOME, /tmp, the working folder: the tests bind what they use), and no user namespace
// (the tasks run as root here; Apptainer runs as the user, setuid or in a user namespace).
// Skips (with the reason) where bubblewrap or the image is missing.
#include <set>
#include <string>

#include "cluster_harness.hpp"
#include "stoker/common/cpuset.hpp"
#include "wheel_share.hpp"

namespace stoker::test {
namespace {

class ApptainerModel : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (run("command -v bwrap").rc != 0) {
      GTEST_SKIP() << "bubblewrap is not installed (scripts/containers.sh install)";
    }
    const RunResult root = run(STOKER_SOURCE_DIR "/scripts/containers.sh image-root");
    if (root.rc != 0) GTEST_SKIP() << "no image root: " << root.out << root.err;
    root_ = root.out.substr(0, root.out.find('\n'));
    const WheelShare w = prepare_wheel_share(share());
    if (w.no_wheel) {
      GTEST_SKIP() << "no wheel in " STOKER_PACKAGE_DIR " (ctest's package.wheel makes it)";
    }
    ASSERT_EQ(w.problem, "");
    // The plan each rank of the same step gets on the host, outside any container.
    const RunResult host = run("srun -N2 -n4 --stoker --stoker-profile=cv " + probe());
    ASSERT_EQ(host.rc, 0) << host.err;
    host_ = parse_probe(host.out);
    ASSERT_EQ(host_.size(), 4u) << host.out;
  }
  static fs::path share() { return jobs() / "apptainer-share"; }
  // The tuned step (2 nodes, 4 ranks, profile cv) with each task in bwrap; `env_options`:
  // bwrap's, before the command (--clearenv, --setenv NAME VALUE). PYTHONPATH is set as
  // APPTAINERENV_PYTHONPATH would, and the rank passed by hand (cleared with --clearenv).
  RunResult step(const std::string& env_options, Probe* ranks) const {
    const std::string bwrap =
        "exec bwrap --ro-bind " + root_ +
        " / --proc /proc --dev /dev --ro-bind /sys /sys "
        "--tmpfs /tmp --tmpfs /run --ro-bind " +
        (share() / "stoker").string() +
        " /opt/stoker "
        "--bind " +
        share().string() + " /share --die-with-parent " + env_options +
        " --setenv PYTHONPATH /opt/stoker/site --setenv PROBE_RANK \"$SLURM_PROCID\" "
        "python3 /share/probe.py";
    const RunResult r = run("srun -N2 -n4 --stoker --stoker-profile=cv sh -c '" + bwrap + "'");
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    *ranks = parse_probe(r.out);
    EXPECT_EQ(ranks->size(), 4u) << r.out << r.err;
    return r;
  }
  std::string root_;
  Probe host_;
};

// Apptainer's default: the host's environment passes, so the plugin's plan arrives whole and
// stoker.plan() reads it (no recomputation); the rank runs where the plan says.
TEST_F(ApptainerModel, TheHostsEnvironmentPassesAndThePluginsPlanIsRead) {
  Probe p;
  const RunResult r = step("", &p);
  ASSERT_FALSE(HasFailure());
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    EXPECT_EQ(env.at("source"), "the STOKER_* environment");
    EXPECT_EQ(CpuSet::parse(env.at("affinity")), CpuSet::parse(env.at("STOKER_CPUS")));
    for (const auto& [name, value] : host_.at(rank)) {
      // Left out: free memory at launch; the job's MASTER_PORT; a folder per job; the seal
      // (container_probe.py does not print it: a digest of the others).
      if (name.rfind("STOKER_", 0) != 0 || name == "STOKER_MEM_BUDGET" ||
          name == "STOKER_EXPORTED" || name == "STOKER_RUN_RECORD_DIR" ||
          name == "STOKER_PLAN_SEAL")
        continue;
      ASSERT_TRUE(env.count(name)) << name << " did not pass";
      EXPECT_EQ(env.at(name), value) << name;
    }
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), host_.at(rank).at("OMP_NUM_THREADS"));
  }
}

// --cleanenv: nothing of the plugin's plan reaches the rank. stoker.plan() then plans in
// the process, as outside Slurm, within the mask the plugin bound (which an exec keeps):
// never wider than the rank's own CPUs, never an error.
TEST_F(ApptainerModel, CleanenvLeavesNoPlanAndTheModulePlansWithinTheBoundMask) {
  Probe p;
  const RunResult r = step("--clearenv", &p);
  ASSERT_FALSE(HasFailure());
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    for (const auto& [name, value] : env) {
      EXPECT_NE(name.rfind("STOKER_", 0), 0u) << name << " passed --clearenv";
    }
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "unset");
    EXPECT_EQ(env.at("source"), "computed on this machine");
    const CpuSet affinity = CpuSet::parse(env.at("affinity"));
    EXPECT_EQ(affinity, CpuSet::parse(host_.at(rank).at("STOKER_CPUS"))) << "the binding passes";
    const CpuSet planned = CpuSet::parse(env.at("plan.STOKER_CPUS"));
    EXPECT_FALSE(planned.empty());
    EXPECT_EQ(planned & affinity, planned) << "planned outside the rank's CPUs";
  }
}

// APPTAINERENV_STOKER_WORKERS=64 (a variable set for the container on top of the host's):
// the plugin's plan stands (STOKER_PLAN_SEAL passed with it), and each rank names the change.
using FaultsApptainerModel = ApptainerModel;  // the faults family's suites are named Faults*
TEST_F(FaultsApptainerModel, AnApptainerenvStokerVariableIsNamedAndThePlanStands) {
  Probe p;
  const RunResult r = step("--setenv STOKER_WORKERS 64", &p);
  ASSERT_FALSE(HasFailure());
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    const std::string planned = host_.at(rank).at("STOKER_WORKERS");
    EXPECT_EQ(env.at("STOKER_WORKERS"), "64");
    EXPECT_EQ(env.at("workers"), planned) << "the plan was replaced";
    EXPECT_NE(env.at("reasons.source").find("STOKER_WORKERS=64 (the plugin's " + planned + ")"),
              std::string::npos);
  }
  EXPECT_EQ(count_of(r.err, "changed after the plugin planned"), 4) << r.err;
}

}  // namespace
}  // namespace stoker::test
