#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "stoker/distributed/coordination.hpp"
#include "stoker/error.hpp"

using stoker::world_from_environment;
using stoker::WorldInfo;

namespace {
std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
std::string error_with(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  try {
    world_from_environment(fake_env);
  } catch (const stoker::Error& e) {
    return e.what();
  }
  return "no error";
}
WorldInfo world_with(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  return world_from_environment(fake_env);
}
}  // namespace

TEST(World, SingleProcessWithoutLauncherVariables) {
  const WorldInfo w = world_with({});
  EXPECT_EQ(w.rank, 0u);
  EXPECT_EQ(w.world_size, 1u);
  EXPECT_EQ(w.local_size, 1u);
  EXPECT_FALSE(w.mpi);
  EXPECT_EQ(w.source, "single process");
}

TEST(World, TorchrunVariables) {
  const WorldInfo w = world_with({{"RANK", "3"},
                                  {"WORLD_SIZE", "4"},
                                  {"LOCAL_RANK", "1"},
                                  {"LOCAL_WORLD_SIZE", "2"},
                                  {"SLURM_PROCID", "0"},
                                  {"SLURM_NTASKS", "1"}});
  EXPECT_EQ(w.rank, 3u);
  EXPECT_EQ(w.world_size, 4u);
  EXPECT_EQ(w.local_rank, 1u);
  EXPECT_EQ(w.local_size, 2u);
  EXPECT_EQ(w.source, "RANK/WORLD_SIZE");  // wins over Slurm's
}

TEST(World, SlurmVariables) {
  const WorldInfo w = world_with({{"SLURM_PROCID", "3"},
                                  {"SLURM_NTASKS", "4"},
                                  {"SLURM_LOCALID", "1"},
                                  {"SLURM_NODEID", "1"},
                                  {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}});
  EXPECT_EQ(w.rank, 3u);
  EXPECT_EQ(w.world_size, 4u);
  EXPECT_EQ(w.local_rank, 1u);
  EXPECT_EQ(w.local_size, 2u);
  EXPECT_EQ(w.source, "SLURM_PROCID/SLURM_NTASKS");
  EXPECT_EQ(world_with({{"SLURM_PROCID", "3"},
                        {"SLURM_NTASKS", "4"},
                        {"SLURM_NODEID", "1"},
                        {"SLURM_TASKS_PER_NODE", "3,1"}})
                .local_size,
            1u);
}

TEST(World, BadVariablesAreClearErrors) {
  EXPECT_EQ(error_with({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
            "RANK: rank 4 is not below WORLD_SIZE=4 (ranks are numbered 0 to world size - 1)");
  EXPECT_EQ(error_with({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE: is 0; a job has at least one rank");
  EXPECT_EQ(error_with({{"RANK", "x"}, {"WORLD_SIZE", "4"}}),
            "RANK: 'x' is not a whole number (unset it or set it to a number such as 0)");
  EXPECT_EQ(error_with({{"RANK", "1"}}),
            "WORLD_SIZE: is unset while RANK is set (set both, or neither)");
  EXPECT_EQ(
      error_with(
          {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x"}}),
      "SLURM_STEP_TASKS_PER_NODE: '2(x' is not a Slurm task list such as 2(x3),1");
}

TEST(World, SeedFromEnvironment) {
  ::unsetenv("STOKER_SEED");
  EXPECT_EQ(stoker::seed_from_environment(5), 5u);
  ::setenv("STOKER_SEED", "77", 1);
  EXPECT_EQ(stoker::seed_from_environment(5), 77u);
  ::setenv("STOKER_SEED", "7x", 1);
  EXPECT_THROW(stoker::seed_from_environment(5), stoker::Error);
  ::unsetenv("STOKER_SEED");
}

TEST(World, WithoutAnMpiLauncherAgreementIsLocal) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(v)) GTEST_SKIP() << v << " is set: this process runs under an MPI launcher";
  }
  const WorldInfo w = stoker::detect_world();
  EXPECT_FALSE(w.mpi);
  stoker::SamplerOptions o;
  o.size = 10;
  o.seed = 31;
  EXPECT_EQ(stoker::agree_on_epoch(o, 4), 31u);
}
