// plan_this_process (the I/O shell) and the `stoker plan` command as built.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "plan_fixture.hpp"
#include "stoker/error.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/plan_env.hpp"

namespace stoker {
namespace {

const std::string kPower8 = STOKER_SHARED_DIR "/topologies/power8gpudistances.xml";

// Sets variables for one test and restores the previous values after it.
class ScopedEnv {
 public:
  void set(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second)
        setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void clear_launcher_env(ScopedEnv& env) {
  for (const char* v : {"STOKER_PLAN_VERSION",
                        "STOKER_PROFILE",
                        "STOKER_PROFILES",
                        "RANK",
                        "WORLD_SIZE",
                        "LOCAL_RANK",
                        "LOCAL_WORLD_SIZE",
                        "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK",
                        "OMPI_COMM_WORLD_LOCAL_SIZE",
                        "SLURM_JOB_ID",
                        "SLURM_PROCID",
                        "SLURM_NTASKS",
                        "SLURM_LOCALID",
                        "SLURM_NODEID",
                        "SLURM_STEP_TASKS_PER_NODE",
                        "SLURM_TASKS_PER_NODE",
                        "SLURM_CPU_BIND_TYPE",
                        "SLURM_CPU_BIND_LIST",
                        "SLURM_STEP_GPUS",
                        "SLURM_JOB_GPUS",
                        "SLURM_MEM_PER_NODE",
                        "SLURM_MEM_PER_CPU",
                        "CUDA_VISIBLE_DEVICES"})
    env.set(v, nullptr);
}

TEST(LocalPlan, ThisProcessIsComputedFromTheLiveMachine) {
  ScopedEnv env;
  clear_launcher_env(env);
  LocalPlan lp = plan_this_process();
  EXPECT_FALSE(lp.from_environment);
  EXPECT_EQ(lp.source, "computed on this machine");
  EXPECT_TRUE(lp.plan.cpus.is_subset_of(current_cpu_mask()));
  EXPECT_EQ(lp.plan.local_size, 1);
  EXPECT_GE(lp.plan.workers, 1);
}

TEST(LocalPlan, LauncherVariablesGiveTheLocalRanks) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("SLURM_LOCALID", "1");
  env.set("SLURM_STEP_TASKS_PER_NODE", "2");
  env.set("STOKER_PROFILE", "nlp");
  LocalPlan lp = plan_this_process();
  EXPECT_EQ(lp.plan.local_rank, 1);
  EXPECT_EQ(lp.plan.local_size, 2);
  EXPECT_EQ(lp.plan.profile, "nlp");
  env.set("LOCAL_RANK", "0");
  env.set("LOCAL_WORLD_SIZE", "1");
  EXPECT_EQ(plan_this_process().plan.local_size, 1);  // torchrun's names win
  env.set("LOCAL_RANK", "x");
  try {
    plan_this_process();
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "LOCAL_RANK: garbled value 'x' (expected a whole number from 0 to 65535; fix or "
                 "unset LOCAL_RANK)");
  }
}

TEST(LocalPlan, UnresolvableCudaVisibleDevicesGivesACpuOnlyPlanWithTheReason) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("CUDA_VISIBLE_DEVICES", "GPU-8a1f0000-0000");
  LocalPlan lp = plan_this_process();
  EXPECT_EQ(lp.plan.gpu, "");
  EXPECT_NE(lp.plan.reason("input").find(
                "GPU ids 'GPU-8a1f0000-0000' (CUDA_VISIBLE_DEVICES): cannot locate GPU GPU-8a1f"),
            std::string::npos)
      << lp.plan.reason("input");
}

TEST(LocalPlan, ThePluginsEnvironmentComesFirst) {
  ScopedEnv env;
  clear_launcher_env(env);
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  Plan planned = make_plan(test::input_for(*topo, 1, 4, {0, 1, 2, 3}));
  for (const auto& [k, v] : plan_to_env(planned)) env.set(k, v.c_str());
  LocalPlan lp = plan_this_process();
  EXPECT_TRUE(lp.from_environment);
  lp.plan.reasons.clear();
  planned.reasons.clear();
  EXPECT_EQ(lp.plan, planned);
  PlanRequest what_if;
  what_if.local_size = 1;
  EXPECT_FALSE(plan_this_process(what_if).from_environment);
}

TEST(LocalPlan, IgnoreEnvRecomputesWithoutAnyStokerVariable) {
  ScopedEnv env;
  clear_launcher_env(env);
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  Plan planned = make_plan(test::input_for(*topo, 1, 4, {0, 1, 2, 3}));
  for (const auto& [k, v] : plan_to_env(planned)) env.set(k, v.c_str());
  env.set("STOKER_PROFILE", "nlp");
  env.set("STOKER_PROFILES", "/nonexistent/profiles.conf");
  PlanRequest r;
  r.ignore_env = true;
  const LocalPlan lp = plan_this_process(r);
  EXPECT_FALSE(lp.from_environment);
  EXPECT_EQ(lp.plan.profile, builtin_profiles().caps.default_profile);
  EXPECT_EQ(lp.plan, plan_this_process(r).plan);
  env.set("STOKER_PROFILE", nullptr);
  env.set("STOKER_PROFILES", nullptr);
  env.set("STOKER_PLAN_VERSION", nullptr);
  EXPECT_EQ(lp.plan, plan_this_process().plan) << "the same as without any STOKER_*";
}

TEST(LocalPlan, OutsideSlurmTheLocalRanksShareThisProcessesMask) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("LOCAL_RANK", "0");
  env.set("LOCAL_WORLD_SIZE", "2");
  const LocalPlan lp = plan_this_process();
  EXPECT_EQ(lp.plan.local_size, 2);
  if (current_cpu_mask().count() >= 2) {
    EXPECT_LT(lp.plan.cpus.count(), current_cpu_mask().count()) << "the mask is shared";
  }
  EXPECT_NE(lp.plan.reason("input").find("shared by the local ranks (this process's mask; not a Slurm task)"),
            std::string::npos)
      << lp.plan.reason("input");
}

TEST(LocalPlan, WhatIfInputsAreCheckedStrictly) {
  if (!std::filesystem::exists(kPower8)) GTEST_SKIP() << kPower8 << " absent";
  ScopedEnv env;
  clear_launcher_env(env);
  PlanRequest r;
  r.topology_xml = kPower8;
  r.gpus = "0,7";
  try {
    plan_this_process(r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "GPU ids '0,7' (--gpus)");
    EXPECT_EQ(e.problem().rfind("cannot locate GPU 7", 0), 0u) << e.what();
    EXPECT_EQ(e.todo(), "list GPU ids that the node has");
  }
  r.gpus = "0,1,2,3";
  r.local_rank = 4;
  r.local_size = 4;
  EXPECT_THROW(plan_this_process(r), Error);
  r.local_rank = 3;
  LocalPlan lp = plan_this_process(r);
  EXPECT_EQ(lp.plan.gpu, lp.topology->gpus[3].pci_bus_id);
}

// Runs the built `stoker` binary; "(absent)" when it has not been built.
std::string run(const std::string& args, int* status) {
  if (!std::filesystem::exists(test::stoker_cli())) return "(absent)";
  auto r = test::run_command(test::stoker_cli() + " " + args + " 2>&1");
  *status = r.status;
  return r.out;
}

TEST(StokerPlanCommand, Power8RankThreeJson) {
  if (!std::filesystem::exists(kPower8)) GTEST_SKIP() << kPower8 << " absent";
  int status = 0;
  std::string out =
      run("plan --topology " + kPower8 + " --local-size 4 --local-rank 3 --gpus 0,1,2,3 --json",
          &status);
  if (out == "(absent)") GTEST_SKIP() << "the stoker binary is not built";
  ASSERT_EQ(status, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  for (const char* key : {"cpus", "main_cpus", "worker_cpus", "numa", "workers", "prefetch",
                          "mem_budget", "gpu", "nics", "profile", "reasons"})
    EXPECT_TRUE(j.contains(key)) << key;
  Topology topo = load_topology_xml(kPower8);
  CpuSet cpus = CpuSet::parse(j["cpus"].get<std::string>());
  const Package* holder = nullptr;
  for (const auto& p : topo.packages)
    if (p.cpus.intersects(topo.gpus[3].local_cpus)) holder = &p;
  ASSERT_NE(holder, nullptr);
  EXPECT_FALSE(cpus.empty());
  EXPECT_TRUE(cpus.is_subset_of(holder->cpus)) << cpus.to_string();
  EXPECT_EQ(j["gpu"], topo.gpus[3].pci_bus_id);
  EXPECT_FALSE(j["reasons"].empty());
}

TEST(StokerPlanCommand, BadInputExitsNonZeroNamingIt) {
  if (!std::filesystem::exists(kPower8)) GTEST_SKIP() << kPower8 << " absent";
  const std::string topo = " --topology " + kPower8;
  const std::pair<std::string, std::string> cases[] = {
      {"plan --topology /nonexistent.xml", "/nonexistent.xml"},
      {"plan" + topo + " --cpus 900-901", "CPU mask: CPUs 900-901 are not on this node"},
      {"plan" + topo + " --cpus ''", "CPU mask: the CPU mask is empty"},
      {"plan" + topo + " --gpus 9", "GPU ids '9' (--gpus): cannot locate GPU 9"},
      {"plan" + topo + " --mem-limit 0", "--mem-limit: '0' is not a size above 0"},
      {"plan" + topo + " --profiles /nonexistent.conf", "/nonexistent.conf: cannot read"},
      {"plan" + topo + " --local-rank 2 --local-size 2", "local rank: local rank 2 is not below"},
      {"plan" + topo + " --workers abc",
       "--stoker-workers=abc: expected auto or a whole number from 1 to 1024"},
      {"plan" + topo + " --profile video",
       "--stoker-profile=video: unknown profile; the admin's profiles are balanced, cv, netfs, "
       "nlp"},
  };
  for (const auto& [args, expected] : cases) {
    int status = 0;
    std::string out = run(args, &status);
    if (out == "(absent)") GTEST_SKIP() << "the stoker binary is not built";
    EXPECT_NE(status, 0) << args;
    EXPECT_NE(out.find("stoker: error: "), std::string::npos) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << args << "\n" << out;
  }
}

TEST(StokerPlanCommand, ExplainsThisMachinesPlan) {
  int status = 0;
  std::string out = run("plan", &status);
  if (out == "(absent)") GTEST_SKIP() << "the stoker binary is not built";
  EXPECT_EQ(status, 0) << out;
  for (const char* s : {"cpus", "workers", "prefetch", "mem budget", "reasons:"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

}  // namespace
}  // namespace stoker
