#include "slurm_world.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace stoker::spank {
namespace {

namespace fs = std::filesystem;

EnvGetter env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(CpuBindUnion, MasksAndMaps) {
  EXPECT_EQ(cpu_bind_union("mask_cpu:", "0x1,0x2").to_string(), "0-1");
  EXPECT_EQ(cpu_bind_union("verbose,mask_cpu:", "0xF0,0x300").to_string(), "4-9");
  EXPECT_EQ(cpu_bind_union("mask_cpu:", "0x10000000000000001").to_string(), "0,64");
  EXPECT_EQ(cpu_bind_union("map_cpu:", "3,1,7").to_string(), "1,3,7");
}

TEST(CpuBindUnion, UnboundOrMalformedIsEmpty) {
  EXPECT_TRUE(cpu_bind_union("", "0x1").empty());
  EXPECT_TRUE(cpu_bind_union("none", "").empty());
  EXPECT_TRUE(cpu_bind_union("mask_cpu:", "0xZZ").empty());
  EXPECT_TRUE(cpu_bind_union("map_cpu:", "1,,2").empty());
  EXPECT_TRUE(cpu_bind_union("map_cpu:", "-1").empty());
}

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("cgroup-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/self");
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(CgroupTree, V2EffectiveCpus) {
  put("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0\n");
  put("sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/cpuset.cpus.effective", "2-5\n");
  EXPECT_EQ(cgroup_cpuset(root_.string()).to_string(), "2-5");
}

TEST_F(CgroupTree, V1CpusetController) {
  put("proc/self/cgroup", "5:memory:/slurm/uid_0/job_3\n4:cpuset:/slurm/uid_0/job_3\n");
  put("sys/fs/cgroup/cpuset/slurm/uid_0/job_3/cpuset.cpus", "0,8\n");
  EXPECT_EQ(cgroup_cpuset(root_.string()).to_string(), "0,8");
}

TEST_F(CgroupTree, NoneOrGarbledIsEmpty) {
  EXPECT_TRUE(cgroup_cpuset(root_.string()).empty());
  put("proc/self/cgroup", "0::/\n");
  put("sys/fs/cgroup/cpuset.cpus.effective", "garbage\n");
  EXPECT_TRUE(cgroup_cpuset(root_.string()).empty());
}

TEST_F(CgroupTree, StepCpusNarrowSlurmMasksToTheCgroup) {
  put("proc/self/cgroup", "0::/job\n");
  put("sys/fs/cgroup/job/cpuset.cpus.effective", "0-2\n");
  const auto env =
      env_of({{"SLURM_CPU_BIND_TYPE", "mask_cpu:"}, {"SLURM_CPU_BIND_LIST", "0x3,0xC"}});
  const StepCpus s = step_cpus(env, root_.string());
  EXPECT_EQ(s.cpus.to_string(), "0-2");
  EXPECT_EQ(step_cpus(env_of({}), root_.string()).cpus.to_string(), "0-2");
  fs::remove(root_ / "proc/self/cgroup");
  EXPECT_EQ(step_cpus(env, root_.string()).cpus.to_string(), "0-3");
  EXPECT_TRUE(step_cpus(env_of({}), root_.string()).cpus.empty());
}

TEST(StepGpuIds, PrefersSlurmsOwnNumbers) {
  EXPECT_EQ(step_gpu_ids(env_of({{"SLURM_STEP_GPUS", "2,3"}, {"CUDA_VISIBLE_DEVICES", "0,1"}})),
            "2,3");
  EXPECT_EQ(step_gpu_ids(env_of({{"SLURM_JOB_GPUS", "1"}, {"CUDA_VISIBLE_DEVICES", "0"}})), "1");
  EXPECT_EQ(step_gpu_ids(env_of({{"CUDA_VISIBLE_DEVICES", "0"}})), "0");
  EXPECT_EQ(step_gpu_ids(env_of({{"SLURM_STEP_GPUS", ""}})), "");
}

TEST(FirstHost, ExpandsTheFirstEntry) {
  EXPECT_EQ(first_host("n[1-2]"), "n1");
  EXPECT_EQ(first_host("gpu[07-09,12],login1"), "gpu07");
  EXPECT_EQ(first_host("node5,node6"), "node5");
  EXPECT_EQ(first_host("r[3,5]n[01-04]"), "r3n01");
  EXPECT_EQ(first_host("rack[2-3]-ib"), "rack2-ib");
  EXPECT_EQ(first_host(""), "");
}

TEST(MasterAddress, ResolvableNameOrThisHost) {
  EXPECT_EQ(master_address("localhost,n2"), "localhost");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(master_address("no-such-node-stoker[1-2]"), host);
}

TEST(MasterPort, UnprivilegedAndStablePerJob) {
  EXPECT_EQ(master_port(0), 20000);
  EXPECT_EQ(master_port(12345), 32345);
  EXPECT_EQ(master_port(20000), 20000);
  EXPECT_EQ(master_port(4294967295u), 20000 + 4294967295u % 20000);
  for (uint32_t j : {1u, 19999u, 777777u}) {
    EXPECT_GE(master_port(j), 20000);
    EXPECT_LT(master_port(j), 40000);
  }
}

TEST(ShouldTune, EnableModesAndSteps) {
  PluginConfig cfg;
  UserOptions none, off, on;
  off.enable = Enable::Off;
  on.enable = Enable::On;
  cfg.enable = EnableMode::OptIn;
  EXPECT_FALSE(should_tune(cfg, none, false, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(cfg, on, true, StepKind::Normal).tune);
  EXPECT_TRUE(should_tune(cfg, none, true, StepKind::Normal).tune);  // e.g. --stoker-workers
  EXPECT_FALSE(should_tune(cfg, off, true, StepKind::Normal).tune);
  cfg.enable = EnableMode::Always;
  EXPECT_TRUE(should_tune(cfg, none, false, StepKind::Normal).tune);
  EXPECT_EQ(should_tune(cfg, off, true, StepKind::Normal).why_not, "--stoker=off");
  EXPECT_FALSE(should_tune(cfg, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(cfg, none, false, StepKind::Extern).tune);
  cfg.batch_step = true;
  EXPECT_TRUE(should_tune(cfg, none, false, StepKind::Batch).tune);
  EXPECT_FALSE(should_tune(cfg, none, false, StepKind::Extern).tune);
  cfg.enable = EnableMode::Never;
  EXPECT_FALSE(should_tune(cfg, on, true, StepKind::Normal).tune);
}

TEST(StepKind, SlurmsSpecialIds) {
  EXPECT_EQ(step_kind(0), StepKind::Normal);
  EXPECT_EQ(step_kind(0xfffffffb), StepKind::Batch);
  EXPECT_EQ(step_kind(0xfffffffc), StepKind::Extern);
  EXPECT_EQ(step_kind(0xfffffffa), StepKind::Interactive);
}

TEST(RankMemory, SharedByLocalRanks) {
  EXPECT_EQ(rank_memory_bytes(4000, 8000, 2, 0), uint64_t{2000} << 20);
  EXPECT_EQ(rank_memory_bytes(0, 8000, 4, 0), uint64_t{2000} << 20);
  EXPECT_EQ(rank_memory_bytes(0, 0, 2, uint64_t{8} << 30), uint64_t{4} << 30);
  EXPECT_EQ(rank_memory_bytes(0, 0, 0, 100), 100u);
}

}  // namespace
}  // namespace stoker::spank
