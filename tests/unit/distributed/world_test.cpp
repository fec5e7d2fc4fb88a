#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

using stoker::MpiChoice;
using stoker::World;

// The launcher's variables are read by launch_ranks (tests/unit/common/launch_env_test.cpp);
// detect_world layers MPI on top.

TEST(World, SeedFromEnvironment) {
  ::unsetenv("STOKER_SEED");
  EXPECT_EQ(stoker::seed_from_environment(5), 5u);
  ::setenv("STOKER_SEED", "77", 1);
  EXPECT_EQ(stoker::seed_from_environment(5), 77u);
  ::setenv("STOKER_SEED", "7x", 1);
  try {
    stoker::seed_from_environment(5);
    ADD_FAILURE() << "no error";
  } catch (const stoker::Error& e) {
    EXPECT_STREQ(e.what(),
                 "STOKER_SEED: garbled value '7x' (expected a whole number, 0 or more; fix or "
                 "unset STOKER_SEED)");
  }
  ::unsetenv("STOKER_SEED");
}

TEST(World, WithoutAnMpiLauncherAgreementIsLocal) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(v)) GTEST_SKIP() << v << " is set: this process runs under an MPI launcher";
  }
  const World w = stoker::detect_world();
  EXPECT_FALSE(w.mpi);
  stoker::SamplerOptions o;
  o.size = 10;
  o.seed = 31;
  EXPECT_EQ(stoker::agree_on_epoch(o, 4), 31u);
}

MpiChoice::Use choice(std::map<std::string, std::string> vars, bool mpi_program = false) {
  return stoker::mpi_choice(stoker::env_from(std::move(vars)), mpi_program).use;
}

// MPI only when asked: STOKER_MPI, Open MPI's launcher when no other launcher owns the process,
// an MPI program under any MPI launcher; srun --mpi=pmix's PMIX_RANK alone asks nothing.
TEST(World, MpiIsWantedOnlyWhenAsked) {
  const std::map<std::string, std::string> pmix = {{"PMIX_RANK", "0"}, {"SLURM_PROCID", "0"}};
  const std::map<std::string, std::string> mpirun = {
      {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"PMIX_RANK", "1"}};
  EXPECT_EQ(choice({}), MpiChoice::if_initialised);
  EXPECT_EQ(choice(pmix), MpiChoice::if_initialised);
  EXPECT_EQ(choice({{"PMI_RANK", "3"}}), MpiChoice::if_initialised);
  EXPECT_EQ(choice(pmix, /*mpi_program=*/true), MpiChoice::wanted);
  EXPECT_EQ(choice(mpirun), MpiChoice::wanted);
  auto torchrun = mpirun;
  torchrun["TORCHELASTIC_RUN_ID"] = "job";
  EXPECT_EQ(choice(torchrun), MpiChoice::if_initialised);
  auto group = mpirun;  // another launcher's RANK/WORLD_SIZE/LOCAL_RANK
  group.insert({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}});
  EXPECT_EQ(choice(group), MpiChoice::if_initialised);
  group["STOKER_EXPORTED"] = "RANK=1,LOCAL_RANK=1,WORLD_SIZE=2,LOCAL_WORLD_SIZE=2";
  EXPECT_EQ(choice(group), MpiChoice::wanted) << "the plugin's own variables own nothing";
  auto on = pmix, off = mpirun;
  on["STOKER_MPI"] = "1";
  off["STOKER_MPI"] = "0";
  EXPECT_EQ(choice(on), MpiChoice::wanted);
  EXPECT_EQ(choice(off), MpiChoice::never);
  EXPECT_EQ(choice(off, /*mpi_program=*/true), MpiChoice::never);
  EXPECT_THROW(choice({{"STOKER_MPI", "yes"}}), stoker::Error);
}

bool libmpi_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/libmpi.so") != std::string::npos) return true;
  }
  return false;
}

// A child process (a death test) whose environment is `vars` (the MPI launchers' others
// unset): exit 0 when detect_world's use of MPI, and libmpi being mapped, are `mpi`. It ends
// with _Exit: MPI started here is never finalised, and under ASan LeakSanitizer's check at
// exit would report Open MPI's own allocations (its components' buffers) as the exit status.
void world_with(const std::map<std::string, std::string>& vars, bool mpi) {
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "STOKER_MPI",
        "TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) {
    ::unsetenv(v);
  }
  for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  const World w = stoker::detect_world();
  std::_Exit(w.mpi == mpi && libmpi_mapped() == mpi ? 0 : 1 + w.mpi + 2 * libmpi_mapped());
}

// No process that did not ask for MPI maps libmpi: a bare srun --mpi=pmix rank (every
// torch.distributed rank under MpiDefault=pmix has PMIX_RANK) used to load it and start MPI.
TEST(FaultsWorldDeathTest, NoProcessThatDidNotAskForMpiMapsLibmpi) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(world_with({{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "slurm.pmix.1.0"}}, false),
              testing::ExitedWithCode(0), "");
  EXPECT_EXIT(world_with({{"PMI_RANK", "0"}}, false), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(world_with({{"PMIX_RANK", "0"},
                          {"OMPI_COMM_WORLD_SIZE", "1"},
                          {"OMPI_COMM_WORLD_RANK", "0"},
                          {"TORCHELASTIC_RUN_ID", "job"},
                          {"RANK", "0"},
                          {"WORLD_SIZE", "1"},
                          {"LOCAL_RANK", "0"},
                          {"LOCAL_WORLD_SIZE", "1"}},
                         false),
              testing::ExitedWithCode(0), "");
}

TEST(WorldDeathTest, StokerMpiOneStartsMpiUnderPmix) {
  if (!std::ifstream("/usr/lib/x86_64-linux-gnu/libmpi.so.40") &&
      !std::ifstream("/usr/lib/aarch64-linux-gnu/libmpi.so.40")) {
    GTEST_SKIP() << "no Open MPI here";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(world_with({{"PMIX_RANK", "0"}, {"STOKER_MPI", "1"}}, true),
              testing::ExitedWithCode(0), "");
}
