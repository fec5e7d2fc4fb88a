// The STOKER_* environment contract: a plan survives the round trip, and a garbled
// or missing variable is an error naming it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/plan_env.hpp"

namespace stoker {
namespace {

using test::sample_plan;

std::optional<Plan> read(const std::map<std::string, std::string>& vars) {
  return read_plan([&](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

std::map<std::string, std::string> as_map(const EnvVars& vars) {
  return {vars.begin(), vars.end()};
}

TEST(PlanEnv, WritesTheDocumentedVariables) {
  auto vars = as_map(plan_to_env(sample_plan()));
  EXPECT_EQ(vars, (std::map<std::string, std::string>{{"STOKER_PLAN_VERSION", "1"},
                                                      {"STOKER_PROFILE", "cv"},
                                                      {"STOKER_WORKERS", "6"},
                                                      {"STOKER_PREFETCH", "12"},
                                                      {"STOKER_PREFETCH_MAX", "48"},
                                                      {"STOKER_CPUS", "8-15,136-143"},
                                                      {"STOKER_MAIN_CPUS", "8,136"},
                                                      {"STOKER_WORKER_CPUS", "9-15,137-143"},
                                                      {"STOKER_NUMA", "1,3"},
                                                      {"STOKER_GPU", "0000:47:00.0"},
                                                      {"STOKER_PIN_MEMORY", "1"},
                                                      {"STOKER_STREAM", "1"},
                                                      {"STOKER_SHUFFLE_BUFFER", "512"},
                                                      {"STOKER_MEM_BUDGET", "34359738368"},
                                                      {"STOKER_BATCH_BYTES", "134217728"},
                                                      {"STOKER_NICS", "mlx5_1,eth0"},
                                                      {"STOKER_BIND", "even"},
                                                      {"STOKER_MEM_BIND", "none"},
                                                      {"STOKER_LOCAL_RANK", "2"},
                                                      {"STOKER_LOCAL_SIZE", "4"}}));
}

TEST(PlanEnv, RoundTripKeepsEveryFieldButTheReasons) {
  Plan strict = sample_plan();
  strict.mem_bind = MemBind::Strict;
  for (Plan p : {sample_plan(), Plan{}, strict}) {
    if (p.profile.empty()) p.profile = "balanced";  // a default plan: no GPU, no NICs, no NUMA
    std::optional<Plan> back = read(as_map(plan_to_env(p)));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->reason("source"), "read from the STOKER_* environment (plan version 1)");
    back->reasons.clear();
    EXPECT_EQ(*back, p);
  }
}

TEST(PlanEnv, AbsentVersionMeansNoPlan) {
  auto vars = as_map(plan_to_env(sample_plan()));
  vars.erase("STOKER_PLAN_VERSION");
  EXPECT_FALSE(read(vars));
}

TEST(PlanEnv, OptionalVariablesMayBeAbsent) {
  auto vars = as_map(plan_to_env(sample_plan()));
  for (const char* v : {"STOKER_GPU", "STOKER_NICS", "STOKER_NUMA", "STOKER_BATCH_BYTES",
                        "STOKER_BIND", "STOKER_MEM_BIND", "STOKER_LOCAL_RANK", "STOKER_LOCAL_SIZE",
                        "STOKER_STREAM", "STOKER_SHUFFLE_BUFFER"})
    vars.erase(v);
  std::optional<Plan> p = read(vars);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->gpu, "");
  EXPECT_TRUE(p->nics.empty());
  EXPECT_EQ(p->local_size, 1);
  EXPECT_EQ(p->bind, BindMode::GpuNuma);
  EXPECT_FALSE(p->stream);  // a plugin of before streaming: shards read by index
  EXPECT_EQ(p->shuffle_buffer, 1000u);
}

struct Garbled {
  const char* var;
  const char* value;  // nullptr: removed
  const char* message;
};

class PlanEnvErrors : public testing::TestWithParam<Garbled> {};

TEST_P(PlanEnvErrors, NamesTheVariable) {
  auto vars = as_map(plan_to_env(sample_plan()));
  if (GetParam().value)
    vars[GetParam().var] = GetParam().value;
  else
    vars.erase(GetParam().var);
  try {
    read(vars);
    FAIL() << "no error for " << GetParam().var;
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), GetParam().var);
    EXPECT_STREQ(e.what(), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    PlanEnv, PlanEnvErrors,
    testing::Values(
        Garbled{"STOKER_PLAN_VERSION", "2",
                "STOKER_PLAN_VERSION: version '2' is not the one this runtime reads (this "
                "runtime reads version 1: use the plugin and runtime of the same stoker release)"},
        Garbled{"STOKER_WORKERS", "many",
                "STOKER_WORKERS: garbled value 'many' (expected a whole number from 1 to 1024; "
                "fix or unset STOKER_WORKERS)"},
        Garbled{"STOKER_WORKERS", nullptr,
                "STOKER_WORKERS: is missing while STOKER_PLAN_VERSION is set (export the whole "
                "STOKER_* set (the plugin does), or unset STOKER_PLAN_VERSION)"},
        Garbled{"STOKER_STREAM", "yes",
                "STOKER_STREAM: garbled value 'yes' (expected 0 or 1; fix or unset STOKER_STREAM)"},
        Garbled{"STOKER_SHUFFLE_BUFFER", "0",
                "STOKER_SHUFFLE_BUFFER: garbled value '0' (expected a whole number from 1 to "
                "16777216; fix or unset STOKER_SHUFFLE_BUFFER)"},
        Garbled{"STOKER_PREFETCH", "0",
                "STOKER_PREFETCH: garbled value '0' (expected a whole number from 1 to 4096; fix "
                "or unset STOKER_PREFETCH)"},
        Garbled{"STOKER_PREFETCH", "5000",
                "STOKER_PREFETCH: garbled value '5000' (expected a whole number from 1 to 4096; "
                "fix or unset STOKER_PREFETCH)"},
        Garbled{"STOKER_PREFETCH_MAX", "11",
                "STOKER_PREFETCH_MAX: garbled value '11' (expected a whole number from 12 to "
                "4096; fix or unset STOKER_PREFETCH_MAX)"},
        Garbled{"STOKER_PREFETCH_MAX", nullptr,
                "STOKER_PREFETCH_MAX: is missing while STOKER_PLAN_VERSION is set (export the "
                "whole STOKER_* set (the plugin does), or unset STOKER_PLAN_VERSION)"},
        Garbled{"STOKER_CPUS", "0-",
                "STOKER_CPUS: garbled value '0-' (expected an OS CPU list such as 0-5,12; fix or "
                "unset STOKER_CPUS)"},
        Garbled{"STOKER_MAIN_CPUS", "x",
                "STOKER_MAIN_CPUS: garbled value 'x' (expected an OS CPU list such as 0-5,12; "
                "fix or unset STOKER_MAIN_CPUS)"},
        Garbled{"STOKER_WORKER_CPUS", nullptr,
                "STOKER_WORKER_CPUS: is missing while STOKER_PLAN_VERSION is set (export the "
                "whole STOKER_* set (the plugin does), or unset STOKER_PLAN_VERSION)"},
        Garbled{"STOKER_NUMA", "0,,1",
                "STOKER_NUMA: garbled value '0,,1' (expected NUMA node numbers such as 0,1; fix "
                "or unset STOKER_NUMA)"},
        Garbled{"STOKER_PIN_MEMORY", "yes",
                "STOKER_PIN_MEMORY: garbled value 'yes' (expected 0 or 1; fix or unset "
                "STOKER_PIN_MEMORY)"},
        Garbled{"STOKER_MEM_BUDGET", "1G",
                "STOKER_MEM_BUDGET: garbled value '1G' (expected a whole number, 0 or more; fix "
                "or unset STOKER_MEM_BUDGET)"},
        Garbled{"STOKER_BATCH_BYTES", "-1",
                "STOKER_BATCH_BYTES: garbled value '-1' (expected a whole number, 0 or more; fix "
                "or unset STOKER_BATCH_BYTES)"},
        Garbled{"STOKER_NICS", "mlx5_0,",
                "STOKER_NICS: garbled value 'mlx5_0,' (expected NIC names separated by commas; "
                "fix or unset STOKER_NICS)"},
        Garbled{"STOKER_BIND", "numa",
                "STOKER_BIND: garbled value 'numa' (expected gpu-numa, even or none; fix or "
                "unset STOKER_BIND)"},
        Garbled{"STOKER_MEM_BIND", "all",
                "STOKER_MEM_BIND: garbled value 'all' (expected local, strict or none; fix or "
                "unset STOKER_MEM_BIND)"},
        Garbled{"STOKER_PROFILE", "a b",
                "STOKER_PROFILE: garbled value 'a b' (expected a profile name (letters, digits, "
                "'-', '_'); fix or unset STOKER_PROFILE)"},
        Garbled{"STOKER_LOCAL_RANK", "4",
                "STOKER_LOCAL_RANK: garbled value '4' (expected a rank below "
                "STOKER_LOCAL_SIZE=4; fix or unset STOKER_LOCAL_RANK)"},
        Garbled{"STOKER_LOCAL_SIZE", "0",
                "STOKER_LOCAL_SIZE: garbled value '0' (expected a whole number from 1 to 65536; "
                "fix or unset STOKER_LOCAL_SIZE)"}));

// A plan read from the environment names only CPUs and NUMA nodes the machine has, and a
// budget above 0 (a fake /sys: 4 CPUs, 2 nodes; and one without NUMA: node 0 only).
TEST(FaultsEnvContract, APlanIsCheckedAgainstTheMachinesCpusNodesAndBudget) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / ("env-" + std::to_string(::getpid()));
  fs::create_directories(root / "sys/devices/system/cpu");
  std::ofstream(root / "sys/devices/system/cpu/online") << "0-3\n";
  Plan p = sample_plan();
  p.cpus = CpuSet::parse("0-3");
  p.main_cpus = CpuSet::parse("0");
  p.worker_cpus = CpuSet::parse("1-3");
  p.numa = {0};
  EXPECT_NO_THROW(check_env_plan(p, root.string()));  // no node/online: node 0 only
  const auto refused = [&](Plan q) -> std::string {
    try {
      check_env_plan(q, root.string());
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  Plan q = p;
  q.numa = {1};
  EXPECT_EQ(refused(q),
            "STOKER_NUMA: names NUMA node 1, which this machine does not have (its nodes: 0) "
            "(fix or unset STOKER_NUMA)");
  fs::create_directories(root / "sys/devices/system/node");
  std::ofstream(root / "sys/devices/system/node/online") << "0-1\n";
  EXPECT_NO_THROW(check_env_plan(q, root.string()));
  q.numa = {0, 7};
  EXPECT_NE(refused(q).find("STOKER_NUMA: names NUMA node 7, which this machine does not have "
                            "(its nodes: 0-1)"),
            std::string::npos);
  q = p;
  q.cpus = CpuSet::parse("2-5,999");
  EXPECT_EQ(refused(q),
            "STOKER_CPUS: names CPUs 4-5,999 that this machine does not have (its online CPUs: "
            "0-3) (fix or unset STOKER_CPUS; the plugin plans for the node it runs on)");
  q = p;
  q.main_cpus = CpuSet::parse("8");
  EXPECT_EQ(refused(q).rfind("STOKER_MAIN_CPUS: names CPUs 8 ", 0), 0u) << refused(q);
  q = p;
  q.mem_budget = 0;
  EXPECT_EQ(refused(q).rfind("STOKER_MEM_BUDGET: is 0: a budget of 0 bytes holds no batch", 0), 0u)
      << refused(q);
  fs::remove_all(root);
}

TEST(PlanSeal, NamesItsStepThenEachVariableWithItsValueAndLeavesOutAValueWithASemicolon) {
  EXPECT_EQ(plan_seal({{"STOKER_WORKERS", "6"}, {"STOKER_PROFILES", "/etc/a;b"}, {"X", ""}}, 77, 0),
            "@step=77.0;STOKER_WORKERS=6;X=");
}

// The seal of the step a process runs in (SLURM_JOB_ID, SLURM_STEP_ID) is read; another step's
// is not, and says so; without the ids (a batch step: Slurm sets no SLURM_STEP_ID there) it is.
TEST(PlanSeal, ASealIsReadInTheStepItWasMadeFor) {
  std::map<std::string, std::string> vars{
      {"STOKER_WORKERS", "64"},
      {kPlanSealVar, plan_seal({{"STOKER_WORKERS", "6"}}, 77, 3)},
      {"SLURM_JOB_ID", "77"}};
  EXPECT_EQ(sealed_env(env_from(vars)).env("STOKER_WORKERS"), "6");
  vars["SLURM_STEP_ID"] = "3";
  EXPECT_EQ(sealed_env(env_from(vars)).env("STOKER_WORKERS"), "6");
  EXPECT_FALSE(sealed_env(env_from(vars)).other_step);
  vars["SLURM_STEP_ID"] = "4";
  const SealedEnv other = sealed_env(env_from(vars));
  EXPECT_TRUE(other.other_step);
  EXPECT_EQ(other.env("STOKER_WORKERS"), "64");
  EXPECT_NE(other.note.find("made for job.step 77.3, and this process runs in 77.4"),
            std::string::npos)
      << other.note;
}

TEST(PlanSeal, WithoutASealTheEnvironmentIsReadAsItIs) {
  const SealedEnv s = sealed_env(env_from({{"STOKER_WORKERS", "64"}}));
  EXPECT_TRUE(s.changed.empty());
  EXPECT_EQ(s.env("STOKER_WORKERS"), "64");
}

// The fault: an image whose environment sets STOKER_WORKERS=64 replaced the plan,
// and the loader ran 64 workers on one CPU. The seal's values are read, and the change named.
TEST(FaultsPlanSeal, AVariableChangedAfterThePluginIsReadFromTheSealAndNamed) {
  std::map<std::string, std::string> vars = as_map(plan_to_env(sample_plan()));
  vars[kPlanSealVar] = plan_seal(plan_to_env(sample_plan()), 77, 0);
  vars["STOKER_WORKERS"] = "64";
  vars.erase("STOKER_NICS");
  vars["STOKER_UNSEALED"] = "kept";
  const SealedEnv s = sealed_env(env_from(vars));
  EXPECT_EQ(s.changed, (std::vector<std::string>{"STOKER_NICS unset (the plugin's mlx5_1,eth0)",
                                                 "STOKER_WORKERS=64 (the plugin's 6)"}));
  EXPECT_EQ(s.env("STOKER_WORKERS"), "6");
  EXPECT_EQ(s.env("STOKER_UNSEALED"), "kept");
  const std::optional<Plan> p = read_plan(s.env);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->workers, 6);
  EXPECT_EQ(p->nics, sample_plan().nics);
}

TEST(FaultsPlanSeal, ThreadVariablesChangedAfterThePluginAreNamed) {
  std::map<std::string, std::string> vars = as_map(plan_to_env(sample_plan()));
  vars[kPlanSealVar] = plan_seal(plan_to_env(sample_plan()), 77, 0);
  vars[kExportedVar] = "RANK=0,OMP_NUM_THREADS=2,MKL_NUM_THREADS=2";
  vars["OMP_NUM_THREADS"] = "7";  // an image's
  vars["MKL_NUM_THREADS"] = "2";
  vars["RANK"] = "5";  // a launcher's own: not a thread variable
  const SealedEnv s = sealed_env(env_from(vars));
  EXPECT_TRUE(s.changed.empty());
  EXPECT_EQ(s.threads_changed, std::vector<std::string>{"OMP_NUM_THREADS=7 (the plugin's 2)"});
}

}  // namespace
}  // namespace stoker
