// plan_for_this_process (the I/O shell) and the `stoker plan` command as built.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "mapped_libraries.hpp"
#include "plan_fixture.hpp"
#include "run_command.hpp"
#include "scoped_env.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/plan_env.hpp"

namespace stoker {
namespace {

const std::string kPower8 = STOKER_SHARED_DIR "/topologies/power8gpudistances.xml";

using test::ScopedEnv;

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
  LocalPlan lp = plan_for_this_process();
  EXPECT_FALSE(lp.from_environment);
  EXPECT_EQ(lp.source, "computed on this machine");
  EXPECT_TRUE(lp.plan.cpus.is_subset_of(current_cpu_mask()));
  EXPECT_EQ(lp.plan.local_size, 1);
  EXPECT_GE(lp.plan.workers, 1);
}

// Planning in-process (stoker.plan(), Loader::for_this_process, `stoker plan`) loads hwloc
// without its plugins: no GL, OpenCL, CUDA-driver or NVML library enters a training process.
TEST(FaultsLocalPlan, PlanningInProcessMapsNoGlOpenClOrGpuDriverLibrary) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("HWLOC_PLUGINS_BLACKLIST", nullptr);
  env.set("CUDA_VISIBLE_DEVICES", "0");  // a GPU job's rank: the plan looks for its GPU
  const LocalPlan lp = plan_for_this_process();
  EXPECT_GE(lp.plan.workers, 1);
  EXPECT_EQ(test::mapped_gpu_or_hwloc_plugin_libraries(), std::set<std::string>{});
}

// The plugin's variables for a plan of this machine, sealed as task_env seals them for step 0
// of job 77 (the tests run outside Slurm: no SLURM_JOB_ID or SLURM_STEP_ID to compare).
std::map<std::string, std::string> sealed_plugin_env() {
  PlanRequest r;
  r.ignore_env = true;
  const EnvVars vars = plan_to_env(plan_for_this_process(r).plan);
  std::map<std::string, std::string> env(vars.begin(), vars.end());
  env[kPlanSealVar] = plan_seal(vars, 77, 0);
  return env;
}

TEST(FaultsLocalPlan, AnImagesStokerVariableDoesNotReplaceThePluginsPlan) {
  ScopedEnv env;
  clear_launcher_env(env);
  std::map<std::string, std::string> vars = sealed_plugin_env();
  const std::string workers = vars.at("STOKER_WORKERS");
  vars["STOKER_WORKERS"] = "64";
  const std::optional<LocalPlan> lp = plugin_plan(env_from(vars));
  ASSERT_TRUE(lp);
  EXPECT_EQ(std::to_string(lp->plan.workers), workers);
  EXPECT_NE(lp->plan.reason("source").find(
                "changed after the plugin planned (by a container image's environment or a "
                "wrapper), not used: STOKER_WORKERS=64 (the plugin's " +
                workers + ")"),
            std::string::npos)
      << lp->plan.reason("source");
}

TEST(FaultsLocalPlan, AnotherReleasesContractIsNotReadButComputedHere) {
  ScopedEnv env;
  clear_launcher_env(env);
  // Another release's plugin: its own version, sealed as that plugin seals it, or no seal.
  std::map<std::string, std::string> vars = sealed_plugin_env();
  vars.erase(kPlanSealVar);
  vars["STOKER_PLAN_VERSION"] = "99";
  vars["STOKER_WORKERS"] = "a field of another meaning";
  EXPECT_FALSE(plugin_plan(env_from(vars)));
  vars[kPlanSealVar] = plan_seal(EnvVars(vars.begin(), vars.end()), 77, 0);
  EXPECT_FALSE(plugin_plan(env_from(vars)));
}

// The version was checked before the seal was applied, so an image that set
// STOKER_PLAN_VERSION (to another release's, or garbage) had its process plan for itself, past
// the seal. The seal holds the version too: the plugin's plan stands, and the change is named.
TEST(FaultsPlanSeal, AnImagesPlanVersionDoesNotBypassTheSeal) {
  ScopedEnv env;
  clear_launcher_env(env);
  std::map<std::string, std::string> vars = sealed_plugin_env();
  const std::string workers = vars.at("STOKER_WORKERS");
  vars["STOKER_PLAN_VERSION"] = "99";
  vars["STOKER_WORKERS"] = "64";
  const std::optional<LocalPlan> lp = plugin_plan(env_from(vars));
  ASSERT_TRUE(lp) << "the image's STOKER_PLAN_VERSION=99 unsealed the plan";
  EXPECT_EQ(std::to_string(lp->plan.workers), workers);
  EXPECT_NE(lp->plan.reason("source").find("STOKER_PLAN_VERSION=99 (the plugin's "),
            std::string::npos)
      << lp->plan.reason("source");
}

// An empty STOKER_PLAN_SEAL (an image or a wrapper cleared it) unsealed the plan without a
// word: the values are read as they are, and the plan's reasons and stderr name the variable.
TEST(FaultsPlanSeal, AnEmptySealIsNamed) {
  ScopedEnv env;
  clear_launcher_env(env);
  std::map<std::string, std::string> vars = sealed_plugin_env();
  vars[kPlanSealVar] = "";
  const std::optional<LocalPlan> lp = plugin_plan(env_from(vars));
  ASSERT_TRUE(lp);
  EXPECT_NE(lp->plan.reason("source").find("STOKER_PLAN_SEAL is empty"), std::string::npos)
      << lp->plan.reason("source");
}

// In a child: binds this process to `cpus` (as taskset or numactl in the step would), then
// prints the plan plugin_plan gives for `vars`: "CPUS|SOURCE".
test::ChildResult plan_when_bound_to(const CpuSet& cpus,
                                     const std::map<std::string, std::string>& vars) {
  return test::run_in_child([&](FILE* out) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus.list()) CPU_SET(c, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) return 2;
    const std::optional<LocalPlan> lp = plugin_plan(env_from(vars));
    if (!lp) return 3;
    std::fprintf(out, "%s|%s", lp->plan.cpus.to_string().c_str(), lp->source.c_str());
    return 0;
  });
}

// The rule for binders (torchrun --numa-binding, taskset, numactl): a process bound
// narrower than its plan keeps its mask, and its plan is made again within it; the worker
// threads used to be pinned back onto the plan's other CPUs.
TEST(FaultsLocalPlan, AProcessBoundNarrowerThanItsPlanKeepsItsMask) {
  ScopedEnv env;
  clear_launcher_env(env);
  const std::map<std::string, std::string> vars = sealed_plugin_env();
  const CpuSet planned = CpuSet::parse(vars.at("STOKER_CPUS"), "STOKER_CPUS");
  const CpuSet main = CpuSet::parse(vars.at("STOKER_MAIN_CPUS"), "STOKER_MAIN_CPUS");
  if (planned.count() < 2) GTEST_SKIP() << "needs a plan of 2 CPUs or more";
  const std::vector<int> cpus = (planned - main).list();
  ASSERT_FALSE(cpus.empty());
  const CpuSet narrow = CpuSet::from_list({cpus.back()});
  const test::ChildResult r = plan_when_bound_to(narrow, vars);
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_EQ(r.out.substr(0, r.out.find('|')), narrow.to_string()) << r.out;
  EXPECT_NE(r.out.find("within this process's mask " + narrow.to_string() +
                       ", narrower than the plan's CPUs " + planned.to_string() +
                       " (a launcher, numactl or taskset bound it): kept"),
            std::string::npos)
      << r.out;
  // The training loop's own pin (the plan's main CPUs), inherited by a child, is no binder.
  const test::ChildResult pinned = plan_when_bound_to(main, vars);
  ASSERT_EQ(pinned.status, 0) << pinned.describe();
  EXPECT_EQ(pinned.out,
            planned.to_string() + "|the STOKER_* environment (the Slurm plugin's plan)");
}

TEST(LocalPlan, LauncherVariablesGiveTheLocalRanks) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("SLURM_LOCALID", "1");
  env.set("SLURM_STEP_TASKS_PER_NODE", "2");
  env.set("STOKER_PROFILE", "nlp");
  LocalPlan lp = plan_for_this_process();
  EXPECT_EQ(lp.plan.local_rank, 1);
  EXPECT_EQ(lp.plan.local_size, 2);
  EXPECT_EQ(lp.plan.profile, "nlp");
  env.set("LOCAL_RANK", "0");
  env.set("LOCAL_WORLD_SIZE", "1");
  EXPECT_EQ(plan_for_this_process().plan.local_size, 1);  // torchrun's names win
  env.set("LOCAL_RANK", "x");
  try {
    plan_for_this_process();
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
  LocalPlan lp = plan_for_this_process();
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
  // On CPUs and a NUMA node this machine has (check_env_plan).
  planned.cpus = planned.main_cpus = planned.worker_cpus = current_cpu_mask();
  planned.numa = {0};
  for (const auto& [k, v] : plan_to_env(planned)) env.set(k, v.c_str());
  LocalPlan lp = plan_for_this_process();
  EXPECT_TRUE(lp.from_environment);
  lp.plan.reasons.clear();
  planned.reasons.clear();
  EXPECT_EQ(lp.plan, planned);
  PlanRequest what_if;
  what_if.local_size = 1;
  EXPECT_FALSE(plan_for_this_process(what_if).from_environment);
}

// torchrun under the plugin: the agent was tuned as one task; each of its workers is planned
// as local rank LOCAL_RANK of LOCAL_WORLD_SIZE within the agent's CPUs, exactly as a what-if
// (srun with one task per worker sharing those CPUs) plans it.
TEST(LocalPlan, ALaunchersWorkersArePlannedWithinItsTasksCpus) {
  ScopedEnv scoped;
  clear_launcher_env(scoped);
  const Plan agent = plan_for_this_process().plan;
  ASSERT_EQ(agent.local_size, 1);
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : plan_to_env(agent)) env[k] = v;
  EXPECT_TRUE(plugin_plan(env_from(env))->from_environment) << "no launcher: as exported";
  env["WORLD_SIZE"] = "2";
  env["LOCAL_WORLD_SIZE"] = "2";
  std::vector<CpuSet> cpus;
  for (int rank : {0, 1}) {
    SCOPED_TRACE("local rank " + std::to_string(rank));
    env["RANK"] = env["LOCAL_RANK"] = std::to_string(rank);
    std::optional<LocalPlan> worker = plugin_plan(env_from(env));
    ASSERT_TRUE(worker.has_value());
    EXPECT_FALSE(worker->from_environment);
    EXPECT_EQ(worker->plan.local_rank, rank);
    EXPECT_EQ(worker->plan.local_size, 2);
    EXPECT_TRUE(worker->plan.cpus.is_subset_of(agent.cpus));
    EXPECT_NE(worker->source.find("under a launcher"), std::string::npos) << worker->source;
    PlanRequest srun_like;
    srun_like.cpus = agent.cpus;
    srun_like.local_rank = rank;
    srun_like.local_size = 2;
    Plan want = plan_for_this_process(srun_like).plan;
    want.reasons.clear();
    worker->plan.reasons.clear();
    EXPECT_EQ(worker->plan, want);
    cpus.push_back(worker->plan.cpus);
  }
  if (agent.cpus.count() >= 2) {
    EXPECT_FALSE(cpus[0].intersects(cpus[1])) << "disjoint";
  }
  env["STOKER_PROFILE"] = "no-such-profile";
  EXPECT_THROW(plugin_plan(env_from(env)), Error) << "an unknown profile is named";
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
  const LocalPlan lp = plan_for_this_process(r);
  EXPECT_FALSE(lp.from_environment);
  EXPECT_EQ(lp.plan.profile, builtin_profiles().caps.default_profile);
  EXPECT_EQ(lp.plan, plan_for_this_process(r).plan);
  env.set("STOKER_PROFILE", nullptr);
  env.set("STOKER_PROFILES", nullptr);
  env.set("STOKER_PLAN_VERSION", nullptr);
  EXPECT_EQ(lp.plan, plan_for_this_process().plan) << "the same as without any STOKER_*";
}

TEST(LocalPlan, OutsideSlurmTheLocalRanksShareThisProcessesMask) {
  ScopedEnv env;
  clear_launcher_env(env);
  env.set("LOCAL_RANK", "0");
  env.set("LOCAL_WORLD_SIZE", "2");
  const LocalPlan lp = plan_for_this_process();
  EXPECT_EQ(lp.plan.local_size, 2);
  if (current_cpu_mask().count() >= 2) {
    EXPECT_LT(lp.plan.cpus.count(), current_cpu_mask().count()) << "the mask is shared";
  }
  EXPECT_NE(lp.plan.reason("input").find(
                "shared by the local ranks (this process's mask; not a Slurm task)"),
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
    plan_for_this_process(r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "GPU ids '0,7' (--gpus)");
    EXPECT_EQ(e.problem().rfind("cannot locate GPU 7", 0), 0u) << e.what();
    EXPECT_EQ(e.todo(), "list GPU ids that the node has");
  }
  r.gpus = "0,1,2,3";
  r.local_rank = 4;
  r.local_size = 4;
  EXPECT_THROW(plan_for_this_process(r), Error);
  r.local_rank = 3;
  LocalPlan lp = plan_for_this_process(r);
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

// The plugin's STOKER_* plan checked against this machine: `stoker plan` accepted
// STOKER_CPUS=999-1000, STOKER_NUMA=7 and STOKER_MEM_BUDGET=0 without a word.
TEST(FaultsEnvContract, StokerPlanRefusesAPlanThisMachineCannotHold) {
  ScopedEnv env;
  clear_launcher_env(env);
  PlanRequest computed;
  computed.ignore_env = true;
  std::string plugin_env;  // this machine's plan, as the plugin exports it
  for (const auto& [k, v] : plan_to_env(plan_for_this_process(computed).plan))
    plugin_env += " " + k + "='" + v + "'";
  int status = 0;
  if (run("plan --json", &status) == "(absent)") GTEST_SKIP() << "the stoker binary is not built";
  EXPECT_EQ((test::run_command("env" + plugin_env + " " + test::stoker_cli() + " plan").status), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"STOKER_CPUS=999-1000",
       "STOKER_CPUS: names CPUs 999-1000 that this machine does not have (its online CPUs: "},
      {"STOKER_WORKER_CPUS=0,4096", "STOKER_WORKER_CPUS: names CPUs 4096 that this machine"},
      {"STOKER_NUMA=7", "STOKER_NUMA: names NUMA node 7, which this machine does not have"},
      {"STOKER_MEM_BUDGET=0", "STOKER_MEM_BUDGET: is 0: a budget of 0 bytes holds no batch"},
  };
  for (const auto& [change, expected] : cases) {
    const auto r = test::run_command("env" + plugin_env + " " + change + " " + test::stoker_cli() +
                                     " plan 2>&1");
    EXPECT_NE(r.status, 0) << change << "\n" << r.out;
    EXPECT_NE(r.out.find("stoker: error: " + expected), std::string::npos) << change << "\n"
                                                                           << r.out;
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
