#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

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
