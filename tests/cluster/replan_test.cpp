// One plan per task: inside each task the runtime's recomputation (`stoker plan --json
// --ignore-env`, the TaskFacts the runtime fills from /proc, the cgroup and the environment)
// equals the plan the plugin exported (the TaskFacts it filled from SPANK items), for 1, 2 and
// 4 ranks per node, with and without --cpus-per-task.
// CPU-only steps: the local cluster's fake gres GPUs cannot be located, so tasks with GPUs
// are left untuned by the plugin and there would be nothing to compare.
#include <nlohmann/json.hpp>
#include <string>

#include "cluster_harness.hpp"

namespace stoker::test {
namespace {

struct Launch {
  const char* srun;       // the step's shape
  int per_node;           // ranks per node it gives
  const char* flags;      // stoker flags for srun
  const char* recompute;  // the same choices for `stoker plan`
};

void PrintTo(const Launch& l, std::ostream* os) {
  *os << "srun -N2 " << l.srun << " " << l.flags;
}

class Replan : public ClusterTest, public ::testing::WithParamInterface<Launch> {};

// The fields of the plan in `file`, without where it came from and why.
nlohmann::json fields(const fs::path& file) {
  nlohmann::json j = nlohmann::json::parse(slurp(file), nullptr, false);
  if (j.is_object()) {
    j.erase("source");
    j.erase("reasons");
  }
  return j;
}

TEST_P(Replan, RecomputedInTheTaskEqualsThePluginsPlan) {
  use_plugin("enable=opt-in");  // the built-in profiles, as `stoker plan` has them
  const Launch& l = GetParam();
  const fs::path out = jobs() / ("replan." + std::to_string(getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string script = STOKER_SOURCE_DIR "/tests/cluster/replan.sh";
  const RunResult r = run(std::string("srun -N2 ") + l.srun + " " + l.flags + " " + script + " " +
                          out.string() + " " STOKER_CLI " " + l.recompute);
  ASSERT_EQ(r.rc, 0) << r.err;
  for (int rank = 0; rank < 2 * l.per_node; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const nlohmann::json exported = fields(out / (std::to_string(rank) + ".exported.json"));
    ASSERT_TRUE(exported.is_object()) << r.err;
    EXPECT_EQ(exported["local_size"], l.per_node);
    EXPECT_EQ(exported, fields(out / (std::to_string(rank) + ".recomputed.json")));
  }
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(
    RanksPerNode, Replan,
    ::testing::Values(Launch{"--ntasks-per-node=1", 1, "--stoker", ""},
                      Launch{"--ntasks-per-node=1 --cpus-per-task=2", 1, "--stoker", ""},
                      Launch{"--ntasks-per-node=2", 2, "--stoker-profile=nlp", "--profile nlp"},
                      Launch{"-n4 --cpus-per-task=2 --overcommit", 2, "--stoker", ""},
                      Launch{"-n8 --overcommit", 4, "--stoker --stoker-workers=2", "--workers 2"},
                      Launch{"-n8 --cpus-per-task=2 --overcommit", 4, "--stoker", ""}),
    [](const ::testing::TestParamInfo<Launch>& info) {
      return std::to_string(info.param.per_node) + "PerNode" +
             (std::string(info.param.srun).find("cpus-per-task") == std::string::npos
                  ? ""
                  : "CpusPerTask");
    });

// A binder inside the step (taskset here; numactl, torchrun --numa-binding alike) narrows the
// task to part of its plan: the runtime keeps that mask and plans within it.
class FaultsBinders : public ClusterTest {};

TEST_F(FaultsBinders, ATaskReboundNarrowerIsPlannedWithinItsNewMask) {
  use_plugin("enable=opt-in");
  const RunResult r =
      run("srun -N1 -n1 --cpus-per-task=2 --stoker sh -c '"
          "echo exported=$STOKER_CPUS main=$STOKER_MAIN_CPUS; "
          "taskset -c 1 " STOKER_CLI " plan --json'");
  ASSERT_EQ(r.rc, 0) << r.err;
  ASSERT_NE(r.out.find("exported=0-1 main=0"), std::string::npos) << r.out;
  const nlohmann::json plan = nlohmann::json::parse(r.out.substr(r.out.find('{')), nullptr, false);
  ASSERT_TRUE(plan.is_object()) << r.out;
  EXPECT_EQ(plan["cpus"], "1");
  EXPECT_NE(plan["source"].get<std::string>().find(
                "within this process's mask 1, narrower than the plan's CPUs 0-1 (a launcher, "
                "numactl or taskset bound it): kept"),
            std::string::npos)
      << plan["source"];
}

}  // namespace
}  // namespace stoker::test
