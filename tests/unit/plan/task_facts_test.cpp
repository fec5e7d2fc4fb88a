// The task facts both fillers read (observe_task and its pieces), on fake /proc + /sys trees;
// and the thread room they carry into the planner's input.
#include "stoker/plan/task_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/plan_input.hpp"

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
    root_ = fs::path(::testing::TempDir()) / ("facts-" + std::to_string(::getpid()));
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
  EXPECT_EQ(step_cpus(env, root()).source,
            "the local tasks' Slurm masks (no cgroup cpuset is readable in this process's view: "
            "Slurm confines with none, or a container hides the step's)");
  EXPECT_TRUE(step_cpus(env_from({}), root()).cpus.empty());
}

// Inside a container's namespaces the step's cgroup is out of this process's view; the
// plugin passes what slurmstepd read at user_init, and the source says whose view it was.
using FaultsFakeRoot = FakeRoot;  // the faults family's suites are named Faults*
TEST_F(FaultsFakeRoot, StepCpusInAContainerUseTheCgroupSlurmstepdSaw) {
  const EnvGetter env =
      env_from({{"SLURM_CPU_BIND_TYPE", "mask_cpu:"}, {"SLURM_CPU_BIND_LIST", "0xF"}});
  const StepCpus s = step_cpus(env, root(), CpuSet::parse("1-2"));
  EXPECT_EQ(s.cpus.to_string(), "1-2");
  EXPECT_EQ(s.source,
            "the local tasks' Slurm masks within the cgroup cpuset (as slurmstepd saw it before "
            "the container's namespaces)");
  EXPECT_EQ(step_cpus(env_from({}), root(), CpuSet::parse("1-2")).source,
            "the step's cgroup cpuset (as slurmstepd saw it before the container's namespaces)");
  // This process's own view, when it has one, comes first.
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/cpuset.cpus.effective", "0-2\n");
  EXPECT_EQ(step_cpus(env, root(), CpuSet::parse("1")).cpus.to_string(), "0-2");
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
  EXPECT_EQ(node_memory(env, {100, 200, {}}, root()).bytes, uint64_t{100} << 20);
  EXPECT_EQ(node_memory(env, {0, 200, {}}, root()).bytes, uint64_t{200} << 20);
  EXPECT_EQ(node_memory(env, {}, root()).from, "SLURM_MEM_PER_NODE");
  EXPECT_EQ(node_memory(env, {}, root()).bytes, uint64_t{3000} << 20);
  const auto per_cpu = env_from({{"SLURM_MEM_PER_CPU", "500"}, {"SLURM_CPUS_ON_NODE", "4"}});
  EXPECT_EQ(node_memory(per_cpu, {}, root()).bytes, uint64_t{2000} << 20);
  // --mem=0 means the whole node: the limit says how much.
  EXPECT_EQ(node_memory(env_from({{"SLURM_MEM_PER_NODE", "0"}}), {}, root()).bytes, 4096u);
  EXPECT_EQ(node_memory(env_from({}), {}, root()).from, "this process's memory limit");
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
  TaskFacts w;
  observe_task(w, env_from({}), {}, root());
  ASSERT_EQ(w.thread_room, std::optional<uint64_t>(20));
  EXPECT_EQ(w.thread_room_from, "pids.max of cgroup " + root() +
                                    "/sys/fs/cgroup/job_9 is 24 "
                                    "with 4 in use");

  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  TaskFacts four = test::four_gpu_facts(*topo, 1, 4);  // 4 ranks share room for 20: 5 each
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
