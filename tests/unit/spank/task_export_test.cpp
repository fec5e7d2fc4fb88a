#include "task_export.hpp"

#include "rendezvous.hpp"

#include <gtest/gtest.h>

#include <map>

#include "stoker/common/strings.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/topology/topology.hpp"
#include "topology_fixtures.hpp"

namespace stoker::spank {
namespace {

// What task_env exports for `plan` (null: untuned) over a task environment `now`.
std::map<std::string, std::string> exported(const Plan* plan, const StepTask& task,
                                            std::map<std::string, std::string> now,
                                            const std::string& profiles = "") {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : task_env(plan, task, env_from(std::move(now)), profiles)) {
    EXPECT_FALSE(env.count(k)) << k << " exported twice";
    env[k] = v;
  }
  return env;
}

// A task of a step. Built field by field: GCC 12 at -O3 reports -Wmaybe-uninitialized on
// Ranks::source inside a nested aggregate initializer ({{rank, ...}, job, ...}), a false
// positive that -Werror made a build failure.
StepTask step_task(uint64_t rank, uint64_t world, uint64_t local_rank, uint64_t local_size,
                   uint32_t job, uint32_t step, std::string master_addr) {
  StepTask t;
  t.rank = rank;
  t.world_size = world;
  t.local_rank = local_rank;
  t.local_size = local_size;
  t.job_id = job;
  t.step_id = step;
  t.master_addr = std::move(master_addr);
  return t;
}

const char* const kLauncherNames[] = {"RANK",        "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                      "MASTER_ADDR", "MASTER_PORT"};

TEST(TaskExport, ThePlanAndTheLaunchersNames) {
  const Topology topo = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu");
  TaskFacts w;
  w.kind = FactsKind::SlurmTask;
  w.topology = &topo;
  w.step = {topo.allowed_cpus, "the test"};
  w.gpu_ids = "0,1";
  w.memory = uint64_t{32} << 30;
  w.local_rank = 1;
  w.local_size = 2;
  const PlanInput in = plan_input(w, {}, builtin_profiles());
  const Plan plan = make_plan(in);
  StepTask task = step_task(5, 8, 1, 2, 12345, 3, "10.0.0.7");
  const auto env = exported(&plan, task, {});
  EXPECT_EQ(env.at("STOKER_GPU"), "0000:3d:00.0");
  EXPECT_EQ(env.at("RANK"), "5");
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("WORLD_SIZE"), "8");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.7");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(master_port(12345, 3)));
  EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  const std::string main = std::to_string(plan.main_cpus.count());
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), main);
  EXPECT_EQ(env.at("MKL_NUM_THREADS"), main);
  EXPECT_EQ(env.at("OPENBLAS_NUM_THREADS"), main);
  // The seal holds its step and the plan's variables as exported, and nothing else.
  const EnvVars plan_vars = plan_to_env(plan);
  std::map<std::string, std::string> sealed(plan_vars.begin(), plan_vars.end());
  sealed["@step"] = "12345.3";
  EXPECT_EQ(split_assignments(env.at(kPlanSealVar), ';'), sealed);
  const std::vector<std::string> lines = describe(task, w, in, plan, "applied");
  ASSERT_FALSE(lines.empty());
  const std::string& line = lines.front();
  EXPECT_EQ(line.rfind("stoker: rank 5 (local 1/2): profile=balanced cpus=", 0), 0u) << line;
  EXPECT_NE(line.find("; from cpus=" + topo.allowed_cpus.to_string() + " (the test) gpus=0,1 mem=" +
                      std::to_string(uint64_t{16} << 30) + " topology=4gpu; binding: applied;"),
            std::string::npos)
      << line;
  for (const std::string& l : lines) EXPECT_LE(l.size(), kMaxLine) << l;
  EXPECT_EQ(line.find(" input: "), std::string::npos) << "said by from cpus=... already";
}

// The fault: a task left untuned (GPU ids the plugin cannot locate, a profile that failed
// to load) got no RANK, WORLD_SIZE or MASTER_* at all, and the job depended on each
// template's own fallbacks. Now it gets the launcher's names, and no plan.
TEST(FaultsTaskExport, AnUntunedTaskStillGetsTheRendezvous) {
  const auto env = exported(nullptr, step_task(3, 4, 1, 2, 77, 0, "n1"), {});
  for (const char* name : kLauncherNames) EXPECT_TRUE(env.count(name)) << name;
  EXPECT_EQ(env.at("RANK"), "3");
  EXPECT_EQ(env.at("WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("MASTER_ADDR"), "n1");
  EXPECT_FALSE(env.count("STOKER_PLAN_VERSION"));
  EXPECT_FALSE(env.count("OMP_NUM_THREADS")) << "no plan, no thread count";
  EXPECT_FALSE(env.count("CUDA_DEVICE_ORDER"));
  EXPECT_FALSE(env.count("STOKER_PROFILES"));
}

// A launcher's workers (torchrun under a tuned agent) are planned with the plugin's profiles.
TEST(TaskExport, TheAdminsProfilesFileGoesWithThePlan) {
  Plan plan;
  const StepTask task = step_task(0, 1, 0, 1, 77, 0, "n1");
  EXPECT_EQ(exported(&plan, task, {}, "/etc/slurm/stoker.conf").at("STOKER_PROFILES"),
            "/etc/slurm/stoker.conf");
  EXPECT_FALSE(exported(&plan, task, {}).count("STOKER_PROFILES")) << "built-in profiles";
}

TEST(TaskExport, WhatTheUserSetIsKept) {
  Plan plan;
  plan.main_cpus = CpuSet::parse("0-2");
  const auto env = exported(&plan, step_task(0, 2, 0, 1, 77, 0, "n1"),
                            {{"MASTER_PORT", "29500"}, {"OMP_NUM_THREADS", "7"}});
  EXPECT_FALSE(env.count("MASTER_PORT"));
  EXPECT_FALSE(env.count("OMP_NUM_THREADS"));
  EXPECT_EQ(env.at("MKL_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("RANK"), "0");
  EXPECT_EQ(env.at(kExportedVar).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(env.at(kExportedVar).find("MKL_NUM_THREADS=3"), std::string::npos);
}

// A step launched from a tuned batch step inherits the batch step's exports: they are the
// plugin's (STOKER_EXPORTED says so), not the user's, and are replaced with this step's.
TEST(FaultsTaskExport, ExportsInheritedFromATunedBatchStepAreReplaced) {
  Plan batch_plan;
  batch_plan.main_cpus = CpuSet::parse("0");
  const StepTask batch = step_task(0, 1, 0, 1, 77, 0xfffffffbu, "n1");
  std::map<std::string, std::string> inherited = exported(&batch_plan, batch, {});
  inherited["OMP_NUM_THREADS"] = "5";  // the batch script's own change: the user's
  Plan plan;
  plan.main_cpus = CpuSet::parse("0-1");
  const auto env = exported(&plan, step_task(1, 4, 1, 2, 77, 0, "n1"), inherited);
  EXPECT_EQ(env.at("RANK"), "1");
  EXPECT_EQ(env.at("WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(master_port(77, 0)));
  EXPECT_NE(env.at("MASTER_PORT"), inherited.at("MASTER_PORT"));
  EXPECT_EQ(env.at("MKL_NUM_THREADS"), "2");
  EXPECT_FALSE(env.count("OMP_NUM_THREADS")) << "the user's 5 is kept";
}

// pyxis's line before stoker's: its task_init copies the image's environment into the task
// (STOKER_WORKERS=64, OMP_NUM_THREADS=7) before the plugin's. Judged against the job's
// environment (as user_init saw it), the image's thread count is not the user's: the plan's
// replaces it, and both are named. The user's own value stays kept and unnamed.
TEST(FaultsTaskExport, AnImagesVariablesSetBeforeThePluginPlannedAreNamedAndReplaced) {
  Plan plan;
  plan.workers = 3;
  plan.main_cpus = CpuSet::parse("0");
  const StepTask task = step_task(2, 4, 0, 2, 77, 0, "n1");
  const std::map<std::string, std::string> job{{"MKL_NUM_THREADS", "2"}};
  std::map<std::string, std::string> now = job;
  now["STOKER_WORKERS"] = "64";
  now["OMP_NUM_THREADS"] = "7";
  const EnvVars vars = task_env(&plan, task, env_from(job));
  std::map<std::string, std::string> env(vars.begin(), vars.end());
  EXPECT_EQ(env.at("STOKER_WORKERS"), "3");
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "1") << "the image's 7 is not the user's";
  EXPECT_FALSE(env.count("MKL_NUM_THREADS")) << "the user's 2 is kept";
  EXPECT_NE(env.at(kExportedVar).find("OMP_NUM_THREADS=1"), std::string::npos);
  EXPECT_EQ(set_before_task_init(vars, env_from(job), env_from(now)),
            (std::vector<std::string>{"STOKER_WORKERS=64", "OMP_NUM_THREADS=7"}));
  // Without a container (nothing changed since user_init) nothing is named.
  EXPECT_TRUE(set_before_task_init(vars, env_from(job), env_from(job)).empty());
}

// Pyxis remaps RANK, and NGC's enroot hook sets WORLD_SIZE and MASTER_* to what the
// plugin sets too; the line named them as replaced. Only a value that differs from the
// plugin's is a change worth a line.
TEST(FaultsTaskExport, OnlyValuesThatDifferFromThePluginsAreNamed) {
  Plan plan;
  plan.main_cpus = CpuSet::parse("0");
  const StepTask task = step_task(2, 4, 0, 2, 77, 0, "n1");
  const EnvVars vars = task_env(&plan, task, env_from({}));
  const std::map<std::string, std::string> env(vars.begin(), vars.end());
  std::map<std::string, std::string> now{{"RANK", "2"},
                                         {"WORLD_SIZE", "4"},
                                         {"MASTER_ADDR", "n1"},
                                         {"MASTER_PORT", env.at("MASTER_PORT")},
                                         {"OMP_NUM_THREADS", "7"}};
  EXPECT_EQ(set_before_task_init(vars, env_from({}), env_from(now)),
            std::vector<std::string>{"OMP_NUM_THREADS=7"});
}

// An image's environment is the same in every task of a node: its line is said once per node,
// by the node's first local rank, and not at all when nothing changed.
TEST(TaskExport, TheReplacedLineIsSaidOncePerNode) {
  const std::vector<std::string> changed{"OMP_NUM_THREADS=7"};
  EXPECT_EQ(set_before_line(step_task(4, 8, 0, 2, 77, 0, "n1"), changed),
            "stoker: rank 4 (once for the node's 2 local rank(s)): set before the plugin planned "
            "(by a container image's environment or another plugin), replaced by the plan's: "
            "OMP_NUM_THREADS=7");
  EXPECT_EQ(set_before_line(step_task(5, 8, 1, 2, 77, 0, "n1"), changed), "");
  EXPECT_EQ(set_before_line(step_task(4, 8, 0, 2, 77, 0, "n1"), {}), "");
}

// A step the plugin leaves untuned (--stoker=off inside a tuned batch step) inherits
// the batch step's STOKER_* and its seal, and its ranks took that plan (made for the batch
// step's one task on the whole node) for their own. The seal names its job and step; a
// process of another step computes its plan itself.
TEST(FaultsTaskExport, AStepInsideATunedBatchStepDoesNotTakeTheBatchStepsPlan) {
  PlanRequest r;
  r.ignore_env = true;
  const Plan plan = plan_for_this_process(r).plan;
  const StepTask batch = step_task(0, 1, 0, 1, 77, 0xfffffffbu, "n1");
  std::map<std::string, std::string> inherited = exported(&plan, batch, {});
  ASSERT_TRUE(plugin_plan(env_from(inherited))) << "the batch step's own processes";
  inherited["SLURM_JOB_ID"] = "77";
  inherited["SLURM_STEP_ID"] = "0";  // the untuned step's task: its own ids, the batch's plan
  EXPECT_FALSE(plugin_plan(env_from(inherited))) << "the batch step's plan was taken";
}

TEST(FaultsTaskExport, LongReasonsContinueOnLinesOfTheirOwn) {
  const Topology topo = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu");
  TaskFacts w;
  w.topology = &topo;
  PlanInput in;
  Plan plan;
  for (int i = 0; i < 40; ++i) plan.reasons.push_back({"cpus", std::string(60, 'x')});
  plan.reasons.push_back({"nics", std::string(5000, 'y')});
  const std::vector<std::string> lines = describe(StepTask{}, w, in, plan, "applied");
  ASSERT_GT(lines.size(), 2u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), kMaxLine);
    if (i) {
      EXPECT_EQ(lines[i].rfind("stoker: rank 0 (more reasons): ", 0), 0u) << lines[i];
    }
  }
}

}  // namespace
}  // namespace stoker::spank
