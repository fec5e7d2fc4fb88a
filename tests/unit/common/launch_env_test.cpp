// The launch environment: the reader family, Slurm's task lists and the one rank detector.
#include "stoker/common/launch_env.hpp"

#include <gtest/gtest.h>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"

namespace stoker {
namespace {

std::string error_of(std::map<std::string, std::string> vars) {
  try {
    launch_ranks(env_from(std::move(vars)));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(LaunchRanks, SingleProcessWithoutLauncherVariables) {
  const Ranks r = launch_ranks(env_from({}));
  EXPECT_EQ(r.rank, 0u);
  EXPECT_EQ(r.world_size, 1u);
  EXPECT_EQ(r.local_rank, 0u);
  EXPECT_EQ(r.local_size, 1u);
  EXPECT_EQ(r.source, "single process: no launcher variables");
}

TEST(LaunchRanks, TorchrunsVariablesWinOverSlurms) {
  const Ranks r = launch_ranks(env_from({{"RANK", "3"},
                                         {"WORLD_SIZE", "4"},
                                         {"LOCAL_RANK", "1"},
                                         {"LOCAL_WORLD_SIZE", "2"},
                                         {"SLURM_PROCID", "0"},
                                         {"SLURM_NTASKS", "1"},
                                         {"SLURM_LOCALID", "0"}}));
  EXPECT_EQ(r.rank, 3u);
  EXPECT_EQ(r.world_size, 4u);
  EXPECT_EQ(r.local_rank, 1u);
  EXPECT_EQ(r.local_size, 2u);
  EXPECT_EQ(r.source, "RANK/WORLD_SIZE, LOCAL_RANK/LOCAL_WORLD_SIZE");
}

TEST(LaunchRanks, OpenMpisLauncherWinsOverTorchrun) {
  const Ranks r = launch_ranks(env_from({{"OMPI_COMM_WORLD_RANK", "5"},
                                         {"OMPI_COMM_WORLD_SIZE", "8"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                         {"RANK", "0"},
                                         {"WORLD_SIZE", "1"}}));
  EXPECT_EQ(r.rank, 5u);
  EXPECT_EQ(r.local_size, 4u);
}

TEST(LaunchRanks, SlurmsVariables) {
  const Ranks r = launch_ranks(env_from({{"SLURM_PROCID", "3"},
                                         {"SLURM_NTASKS", "4"},
                                         {"SLURM_LOCALID", "1"},
                                         {"SLURM_NODEID", "1"},
                                         {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}}));
  EXPECT_EQ(r.rank, 3u);
  EXPECT_EQ(r.world_size, 4u);
  EXPECT_EQ(r.local_rank, 1u);
  EXPECT_EQ(r.local_size, 2u);
  EXPECT_EQ(r.source, "SLURM_PROCID/SLURM_NTASKS, SLURM_LOCALID/SLURM_STEP_TASKS_PER_NODE");
  // The job's list when the step has none (the batch script), at this node.
  EXPECT_EQ(launch_ranks(env_from({{"SLURM_PROCID", "3"},
                                   {"SLURM_NTASKS", "4"},
                                   {"SLURM_LOCALID", "0"},
                                   {"SLURM_NODEID", "1"},
                                   {"SLURM_TASKS_PER_NODE", "3,1"}}))
                .local_size,
            1u);
}

TEST(LaunchRanks, EachPairFromTheFirstLauncherThatSetsIt) {
  // A wrapper that sets RANK/WORLD_SIZE inside a Slurm step: the local pair stays Slurm's.
  const Ranks r = launch_ranks(env_from({{"RANK", "2"},
                                         {"WORLD_SIZE", "4"},
                                         {"SLURM_PROCID", "0"},
                                         {"SLURM_LOCALID", "0"},
                                         {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}}));
  EXPECT_EQ(r.rank, 2u);
  EXPECT_EQ(r.local_size, 2u);
}

TEST(FaultsLaunchEnv, GarbledOrInconsistentVariablesNameTheVariable) {
  EXPECT_EQ(error_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
            "RANK: rank 4 is not below WORLD_SIZE=4 (ranks are numbered 0 to WORLD_SIZE - 1)");
  EXPECT_EQ(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE: garbled value '0' (expected a whole number from 1 to 16777216; fix or "
            "unset WORLD_SIZE)");
  EXPECT_EQ(error_of({{"RANK", "x"}, {"WORLD_SIZE", "4"}}),
            "RANK: garbled value 'x' (expected a whole number from 0 to 16777215; fix or unset "
            "RANK)");
  EXPECT_EQ(error_of({{"RANK", " 1"}, {"WORLD_SIZE", "4"}}).rfind("RANK: garbled value ' 1'", 0),
            0u);
  EXPECT_EQ(error_of({{"RANK", ""}, {"WORLD_SIZE", "4"}}).rfind("RANK: garbled value ''", 0), 0u);
  EXPECT_EQ(error_of({{"RANK", "1"}}),
            "WORLD_SIZE: is unset while RANK is set (set both, or neither)");
  EXPECT_EQ(error_of({{"LOCAL_RANK", "1"}}),
            "LOCAL_WORLD_SIZE: is unset while LOCAL_RANK is set (set both, or neither)");
  EXPECT_EQ(error_of({{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
            "LOCAL_RANK: rank 2 is not below LOCAL_WORLD_SIZE=2 (ranks are numbered 0 to "
            "LOCAL_WORLD_SIZE - 1)");
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"},
                      {"SLURM_NTASKS", "2"},
                      {"SLURM_LOCALID", "0"},
                      {"SLURM_STEP_TASKS_PER_NODE", "2(x"}}),
            "SLURM_STEP_TASKS_PER_NODE: '2(x' is not a Slurm task list such as 2(x3),1");
  EXPECT_EQ(
      error_of(
          {{"SLURM_LOCALID", "0"}, {"SLURM_NODEID", "5"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}}),
      "SLURM_STEP_TASKS_PER_NODE: '2(x2)' lists no task for SLURM_NODEID=5 (fix or unset "
      "the launcher's variables)");
  EXPECT_EQ(error_of({{"SLURM_LOCALID", "1"}}).rfind("SLURM_LOCALID: 1 while neither", 0), 0u);
  EXPECT_EQ(error_of({{"SLURM_PROCID", "2"}}),
            "SLURM_PROCID: rank 2 is not below SLURM_NTASKS=1 (ranks are numbered 0 to "
            "SLURM_NTASKS - 1)");
}

TEST(EnvReaders, WholeNumbersAndCpuListsWithOneMessage) {
  const EnvGetter env =
      env_from({{"N", "42"}, {"BIG", "99999999999999999999"}, {"C", "0-3,8"}, {"BAD", "0-"}});
  EXPECT_EQ(env_whole(env, "N", 1, 100), 42u);
  EXPECT_EQ(env_whole(env, "UNSET", 1, 100), std::nullopt);
  EXPECT_THROW(env_whole(env, "N", 1, 10), Error);
  EXPECT_THROW(env_whole(env, "BIG", 0, UINT64_MAX), Error);
  EXPECT_EQ(env_cpus(env, "C")->to_string(), "0-3,8");
  try {
    env_cpus(env, "BAD");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "BAD: garbled value '0-' (expected an OS CPU list such as 0-5,12; fix or unset "
                 "BAD)");
  }
}

TEST(EnvReaders, AnEmptyValueReadsAsUnsetWhereAskedFor) {
  const EnvGetter env = env_from({{"SET", "x"}, {"EMPTY", ""}});
  EXPECT_EQ(env_nonempty(env, "SET"), "x");
  EXPECT_EQ(env_nonempty(env, "EMPTY"), std::nullopt);
  EXPECT_EQ(env_nonempty(env, "UNSET"), std::nullopt);
  EXPECT_EQ(env("EMPTY"), "");  // the getter itself tells empty from unset
}

TEST(FaultsLaunchEnv, SlurmTaskListsAreReadWholeAndStrictly) {
  EXPECT_EQ(slurm_tasks_on_node("L", "2(x3),1", 0), 2u);
  EXPECT_EQ(slurm_tasks_on_node("L", "2(x3),1", 2), 2u);
  EXPECT_EQ(slurm_tasks_on_node("L", "2(x3),1", 3), 1u);
  EXPECT_EQ(slurm_tasks_on_node("L", "2(x3),1", 4), 0u);
  for (const char* bad : {"", "x", "2(x3", "2(x)", "2,,1", "-1"})
    EXPECT_THROW(slurm_tasks_on_node("L", bad, 0), Error) << bad;
}

TEST(Strings, SplitJoinTrimAndPaths) {
  EXPECT_EQ(split("a,,b", ',').size(), 3u);
  EXPECT_EQ(split("", ',').size(), 1u);
  EXPECT_EQ(join({"a", "b"}, ", "), "a, b");
  EXPECT_EQ(join_numbers({0, 2}), "0,2");
  EXPECT_EQ(trim(" \t x y \n"), "x y");
  EXPECT_EQ(lower("MiG-AB"), "mig-ab");
  EXPECT_EQ(under_root("/", "/proc/self/cgroup"), "/proc/self/cgroup");
  EXPECT_EQ(under_root("/tmp/fake", "/proc/self"), "/tmp/fake/proc/self");
  EXPECT_EQ(under_root("", "sys"), "/sys");
  EXPECT_EQ(read_first_line("/nonexistent/file"), std::nullopt);
}

}  // namespace
}  // namespace stoker
