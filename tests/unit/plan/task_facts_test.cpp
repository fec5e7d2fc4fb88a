// The one builder of the planner's input (plan_input) and the task facts both fillers read
// (observe_task's pieces), on fixture topologies and fake /proc + /sys trees.
#include "stoker/plan/task_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;

TEST(CpuBindUnion, MasksAndMaps) {
  EXPECT_EQ(cpu_bind_union("mask_cpu:", "0x1,0x2").to_string(), "0-1");
  EXPECT_EQ(cpu_bind_union("verbose,mask_cpu:", "0xF0,0x300").to_string(), "4-9");
  EXPECT_EQ(cpu_bind_union("mask_cpu:", "0x10000000000000001").to_string(), "0,64");
  EXPECT_EQ(cpu_bind_union("map_cpu:", "3,1,7").to_string(), "1,3,7");
}

TEST(FaultsTaskFacts, UnboundOrGarbledSlurmMasksAreUnknown) {
  EXPECT_TRUE(cpu_bind_union("", "0x1").empty());
  EXPECT_TRUE(cpu_bind_union("none", "").empty());
  EXPECT_TRUE(cpu_bind_union("mask_cpu:", "0xZZ").empty());
  EXPECT_TRUE(cpu_bind_union("map_cpu:", "1,,2").empty());
  EXPECT_TRUE(cpu_bind_union("map_cpu:", "-1").empty());
  EXPECT_TRUE(cpu_bind_union("map_cpu:", "65536").empty());
  EXPECT_TRUE(cpu_bind_union("mask_cpu:", "0x" + std::string(20000, 'f')).empty());
}

class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("world-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/self");
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

TEST_F(FakeRoot, CgroupV2EffectiveCpus) {
  put("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0\n");
  put("sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/cpuset.cpus.effective", "2-5\n");
  EXPECT_EQ(cgroup_cpuset(root()).to_string(), "2-5");
}

TEST_F(FakeRoot, CgroupV1CpusetController) {
  put("proc/self/cgroup", "5:memory:/slurm/uid_0/job_3\n4:cpuset:/slurm/uid_0/job_3\n");
  put("sys/fs/cgroup/cpuset/slurm/uid_0/job_3/cpuset.cpus", "0,8\n");
  EXPECT_EQ(cgroup_cpuset(root()).to_string(), "0,8");
}

TEST_F(FakeRoot, NoneOrGarbledCgroupIsEmpty) {
  EXPECT_TRUE(cgroup_cpuset(root()).empty());
  put("proc/self/cgroup", "0::/\n");
  put("sys/fs/cgroup/cpuset.cpus.effective", "garbage\n");
  EXPECT_TRUE(cgroup_cpuset(root()).empty());
}

TEST_F(FakeRoot, StepCpusNarrowSlurmMasksToTheCgroup) {
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/cpuset.cpus.effective", "0-2\n");
  const auto env =
      env_from({{"SLURM_CPU_BIND_TYPE", "mask_cpu:"}, {"SLURM_CPU_BIND_LIST", "0x3,0xC"}});
  const StepCpus s = step_cpus(env, root());
  EXPECT_EQ(s.cpus.to_string(), "0-2");
  EXPECT_EQ(s.source, "the local tasks' Slurm masks within the cgroup cpuset");
  EXPECT_EQ(step_cpus(env_from({}), root()).cpus.to_string(), "0-2");
  fs::remove(root_ / "proc/self/cgroup");
  EXPECT_EQ(step_cpus(env, root()).cpus.to_string(), "0-3");
  EXPECT_TRUE(step_cpus(env_from({}), root()).cpus.empty());
}

TEST(StepGpuIds, PrefersSlurmsOwnNumbers) {
  auto ids = [](std::map<std::string, std::string> vars) {
    auto g = step_gpu_ids(env_from(std::move(vars)));
    return g ? g->ids + " from " + g->from : "none";
  };
  EXPECT_EQ(ids({{"SLURM_STEP_GPUS", "2,3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}),
            "2,3 from SLURM_STEP_GPUS");
  EXPECT_EQ(ids({{"SLURM_JOB_GPUS", "1"}, {"CUDA_VISIBLE_DEVICES", "0"}}), "1 from SLURM_JOB_GPUS");
  EXPECT_EQ(ids({{"CUDA_VISIBLE_DEVICES", "0"}}), "0 from CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(ids({{"SLURM_STEP_GPUS", ""}}), "none");
}

TEST_F(FakeRoot, NodeMemoryFromItemsThenSlurmsVariablesThenTheLimit) {
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/memory.max", "4096\n");
  const auto env = env_from({{"SLURM_MEM_PER_NODE", "3000"}});
  EXPECT_EQ(node_memory(env, {100, 200}, root()).bytes, uint64_t{100} << 20);
  EXPECT_EQ(node_memory(env, {0, 200}, root()).bytes, uint64_t{200} << 20);
  EXPECT_EQ(node_memory(env, {}, root()).from, "SLURM_MEM_PER_NODE");
  EXPECT_EQ(node_memory(env, {}, root()).bytes, uint64_t{3000} << 20);
  const auto per_cpu = env_from({{"SLURM_MEM_PER_CPU", "500"}, {"SLURM_CPUS_ON_NODE", "4"}});
  EXPECT_EQ(node_memory(per_cpu, {}, root()).bytes, uint64_t{2000} << 20);
  // --mem=0 means the whole node: the limit says how much.
  EXPECT_EQ(node_memory(env_from({{"SLURM_MEM_PER_NODE", "0"}}), {}, root()).bytes, 4096u);
  EXPECT_EQ(node_memory(env_from({}), {}, root()).from, "this process's memory limit");
}

TEST(ShouldTune, EnableModesAndSteps) {
  UserOptions none, off, on;
  off.enable = Enable::Off;
  on.enable = Enable::On;
  EXPECT_FALSE(should_tune(EnableMode::OptIn, false, none, false, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(EnableMode::OptIn, false, on, true, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(EnableMode::OptIn, false, none, true, StepKind::Normal).tune);
  EXPECT_FALSE(should_tune(EnableMode::OptIn, false, off, true, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(EnableMode::Always, false, none, false, StepKind::Normal).tune);
  EXPECT_EQ(should_tune(EnableMode::Always, false, off, true, StepKind::Normal).why_not,
            "--stoker=off");
  EXPECT_FALSE(should_tune(EnableMode::Always, false, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(EnableMode::Always, false, none, false, StepKind::Extern).tune);
  EXPECT_TRUE(should_tune(EnableMode::Always, true, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(EnableMode::Always, true, none, false, StepKind::Extern).tune);
  EXPECT_FALSE(should_tune(EnableMode::Never, false, on, true, StepKind::Normal).tune);
}

TEST(StepKind, SlurmsSpecialIds) {
  EXPECT_EQ(step_kind(0), StepKind::Normal);
  EXPECT_EQ(step_kind(0xfffffffb), StepKind::Batch);
  EXPECT_EQ(step_kind(0xfffffffc), StepKind::Extern);
  EXPECT_EQ(step_kind(0xfffffffa), StepKind::Interactive);
}

// A rank of a 4-GPU node, as the plugin would fill it: rank `rank` of `size` sharing the
// whole node, GPU ids 0-3, 64 GiB for the node.
World four_gpu_world(const Topology& topo, int rank, int size) {
  World w;
  w.kind = WorldKind::SlurmTask;
  w.topology = &topo;
  w.own_mask = topo.allowed_cpus;
  w.step = {topo.allowed_cpus, "the test"};
  w.gpu_ids = "0,1,2,3";
  w.memory = uint64_t{64} << 30;
  w.local_rank = rank;
  w.local_size = size;
  return w;
}

TEST(FaultsPlanInput, ProfileFromTheOptionsThenTheWorldThenTheFile) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  const ProfileSet profiles = builtin_profiles();
  World w = four_gpu_world(*topo, 0, 1);
  UserOptions opts;
  EXPECT_EQ(chosen_profile(w, opts, profiles), profiles.caps.default_profile);
  w.default_profile = "nlp";
  EXPECT_EQ(plan_input(w, opts, profiles).profile.name, "nlp");
  opts.profile = "cv";
  EXPECT_EQ(plan_input(w, opts, profiles).profile.name, "cv");
  w.default_profile = "video";
  w.default_profile_from = "STOKER_PROFILE";
  opts.profile.reset();
  try {
    plan_input(w, opts, profiles);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "STOKER_PROFILE");
    EXPECT_EQ(e.problem(), "unknown profile 'video'");
  }
}

TEST(PlanInput, TheStepsCpusAreSharedAndEveryRankGetsItsGpu) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  const PlanInput in = plan_input(four_gpu_world(*topo, 3, 4), {}, builtin_profiles());
  EXPECT_EQ(in.allowed, topo->allowed_cpus);
  EXPECT_EQ(in.local_rank, 3);
  EXPECT_EQ(in.local_size, 4);
  EXPECT_EQ(in.local_gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(in.mem_limit, uint64_t{16} << 30);  // the node's 64 GiB / 4 local ranks
}

TEST(PlanInput, UnknownStepCpusPlanTheRankAloneInItsMask) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  World w = four_gpu_world(*topo, 2, 4);
  w.step = {};
  w.own_mask = CpuSet::range(16, 23);
  const PlanInput in = plan_input(w, {}, builtin_profiles());
  EXPECT_EQ(in.allowed, w.own_mask);
  EXPECT_EQ(in.local_rank, 0);
  EXPECT_EQ(in.local_size, 1);
  EXPECT_EQ(in.local_gpus, (std::vector<int>{2}));
  EXPECT_EQ(in.mem_limit, uint64_t{16} << 30);  // still the node's share
}

// Why the rule above: inside a task the plugin bound, the mask is the plan's CPUs, and
// planning alone within it gives that plan again (the runtime and the plugin agree).
TEST(PlanInput, PlanningAloneInsideARanksShareGivesTheSamePlan) {
  auto topo = test::fixture(test::four_gpu_two_socket(true), "4gpu-smt");
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("local rank " + std::to_string(rank));
    const World shared = four_gpu_world(*topo, rank, 4);
    const Plan planned = make_plan(plan_input(shared, {}, builtin_profiles()));
    World bound = shared;
    bound.step = {};
    bound.own_mask = planned.cpus;
    const Plan again = make_plan(plan_input(bound, {}, builtin_profiles()));
    for (const auto& [a, b] : {std::pair{planned.cpus, again.cpus},
                               {planned.main_cpus, again.main_cpus},
                               {planned.worker_cpus, again.worker_cpus}})
      EXPECT_EQ(a.to_string(), b.to_string());
    EXPECT_EQ(planned.workers, again.workers);
    EXPECT_EQ(planned.prefetch, again.prefetch);
    EXPECT_EQ(planned.mem_budget, again.mem_budget);
    EXPECT_EQ(planned.gpu, again.gpu);
    EXPECT_EQ(planned.numa, again.numa);
    EXPECT_EQ(planned.nics, again.nics);
  }
}

TEST(PlanInput, MemoryGivenPerRankIsNotDividedAgain) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  World w = four_gpu_world(*topo, 1, 4);
  w.memory = uint64_t{8} << 30;
  w.memory_per_rank = true;
  EXPECT_EQ(plan_input(w, {}, builtin_profiles()).mem_limit, uint64_t{8} << 30);
}

TEST(FaultsPlanInput, GpuIdsItCannotLocateDependOnWhoAsks) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  World w = four_gpu_world(*topo, 0, 2);
  w.gpu_ids = "GPU-8a1f";
  w.gpu_ids_from = "SLURM_STEP_GPUS";
  // The plugin: an error, so the task runs untuned under Slurm's own binding.
  try {
    plan_input(w, {}, builtin_profiles());
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "GPU ids 'GPU-8a1f' (SLURM_STEP_GPUS): cannot locate GPU GPU-8a1f: UUID-style "
                 "ids are not supported, only integer indices");
  }
  // The runtime: a CPU-only plan that says why.
  w.kind = WorldKind::ThisProcess;
  const PlanInput in = plan_input(w, {}, builtin_profiles());
  EXPECT_TRUE(in.local_gpus.empty());
  EXPECT_EQ(in.notes.front(),
            "GPU ids 'GPU-8a1f' (SLURM_STEP_GPUS): cannot locate GPU GPU-8a1f: UUID-style ids "
            "are not supported, only integer indices; planning without a GPU");
  // A what-if: an error that says what to give.
  w.kind = WorldKind::WhatIf;
  EXPECT_THROW(plan_input(w, {}, builtin_profiles()), Error);
}

TEST(FaultsPlanInput, OptionsOverTheCapsOfTheProfilesNow) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  ProfileSet profiles = builtin_profiles();
  profiles.caps.max_prefetch = 8;
  UserOptions opts;
  ASSERT_EQ(set_user_option(opts, "stoker-prefetch", "16"), "");
  try {
    plan_input(four_gpu_world(*topo, 0, 1), opts, profiles);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--stoker-prefetch=16: over the admin's cap MaxPrefetch=8");
  }
}

TEST(FaultsPlanInput, GarbledSlurmMemoryNamesTheVariable) {
  try {
    node_memory(env_from({{"SLURM_MEM_PER_NODE", "4G"}}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "SLURM_MEM_PER_NODE: garbled value '4G' (expected a whole number from 0 to "
                 "1073741824; fix or unset SLURM_MEM_PER_NODE)");
  }
}

// A task under ulimit -u or a job's pids.max: the plan asked for more workers than the
// task may create, and the loader then failed to start them. The thread room observed
// for the task bounds the workers (shared by the local ranks), the requested ones too.
class FaultsThreadRoom : public FakeRoot {};  // a Faults* suite: the faults family

TEST_F(FaultsThreadRoom, TheTasksThreadLimitBoundsTheWorkers) {
  put("proc/self/cgroup", "0::/job_9/step_0\n");
  put("sys/fs/cgroup/job_9/pids.max", "24\n");
  put("sys/fs/cgroup/job_9/pids.current", "4\n");
  put("sys/fs/cgroup/job_9/step_0/pids.max", "max\n");
  put("sys/fs/cgroup/job_9/step_0/pids.current", "3\n");
  World w;
  observe_task(w, env_from({}), {}, root());
  ASSERT_EQ(w.thread_room, std::optional<uint64_t>(20));
  EXPECT_EQ(w.thread_room_from, "pids.max of cgroup " + root() +
                                    "/sys/fs/cgroup/job_9 is 24 "
                                    "with 4 in use");

  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  World four = four_gpu_world(*topo, 1, 4);  // 4 ranks share room for 20: 5 each
  four.thread_room = w.thread_room;
  four.thread_room_from = w.thread_room_from;
  UserOptions opts;
  opts.overrides.workers = 8;
  const Plan p = make_plan(plan_input(four, opts, builtin_profiles()));
  EXPECT_EQ(p.workers, 3);  // 5, less 2 for the stream reader and the metrics writer
  EXPECT_NE(p.reason("workers").find("lowered to 3: this rank may create 5 more thread(s) ("
                                     "pids.max of cgroup "),
            std::string::npos)
      << p.reason("workers");
  EXPECT_NE(p.reason("workers").find("shared by 4 local ranks), 2 kept for the loader's other "
                                     "threads"),
            std::string::npos)
      << p.reason("workers");
  four.thread_room = 1;  // no room at all: still one worker (its failure is a clear error)
  EXPECT_EQ(make_plan(plan_input(four, {}, builtin_profiles())).workers, 1);
  four.thread_room.reset();  // no limit known: as before (capped by MaxWorkerFraction only)
  EXPECT_GT(make_plan(plan_input(four, opts, builtin_profiles())).workers, 3);
}

}  // namespace
}  // namespace stoker
