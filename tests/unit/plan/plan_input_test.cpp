// The one builder of the planner's input (plan_input): the profile's choice, the step's CPUs
// and GPUs shared by the local ranks, the memory split, and who asks deciding what a bad
// input does; on fixture topologies.
#include "stoker/plan/plan_input.hpp"

#include <gtest/gtest.h>

#include "plan_fixture.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

TEST(FaultsPlanInput, ProfileFromTheOptionsThenTheFactsThenTheFile) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  const ProfileSet profiles = builtin_profiles();
  TaskFacts w = test::four_gpu_facts(*topo, 0, 1);
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
  const PlanInput in = plan_input(test::four_gpu_facts(*topo, 3, 4), {}, builtin_profiles());
  EXPECT_EQ(in.allowed, topo->allowed_cpus);
  EXPECT_EQ(in.local_rank, 3);
  EXPECT_EQ(in.local_size, 4);
  EXPECT_EQ(in.local_gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(in.mem_limit, uint64_t{16} << 30);  // the node's 64 GiB / 4 local ranks
}

TEST(PlanInput, UnknownStepCpusPlanTheRankAloneInItsMask) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  TaskFacts w = test::four_gpu_facts(*topo, 2, 4);
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
    const TaskFacts shared = test::four_gpu_facts(*topo, rank, 4);
    const Plan planned = make_plan(plan_input(shared, {}, builtin_profiles()));
    TaskFacts bound = shared;
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
  TaskFacts w = test::four_gpu_facts(*topo, 1, 4);
  w.memory = uint64_t{8} << 30;
  w.memory_per_rank = true;
  EXPECT_EQ(plan_input(w, {}, builtin_profiles()).mem_limit, uint64_t{8} << 30);
}

TEST(FaultsPlanInput, GpuIdsItCannotLocateDependOnWhoAsks) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  TaskFacts w = test::four_gpu_facts(*topo, 0, 2);
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
  w.kind = FactsKind::ThisProcess;
  const PlanInput in = plan_input(w, {}, builtin_profiles());
  EXPECT_TRUE(in.local_gpus.empty());
  EXPECT_EQ(in.notes.front(),
            "GPU ids 'GPU-8a1f' (SLURM_STEP_GPUS): cannot locate GPU GPU-8a1f: UUID-style ids "
            "are not supported, only integer indices; planning without a GPU");
  // A what-if: an error that says what to give.
  w.kind = FactsKind::WhatIf;
  EXPECT_THROW(plan_input(w, {}, builtin_profiles()), Error);
}

TEST(FaultsPlanInput, OptionsOverTheCapsOfTheProfilesNow) {
  auto topo = test::fixture(test::four_gpu_two_socket(false), "4gpu");
  ProfileSet profiles = builtin_profiles();
  profiles.caps.max_prefetch = 8;
  UserOptions opts;
  ASSERT_NO_THROW(set_user_option(opts, "stoker-prefetch", "16"));
  try {
    plan_input(test::four_gpu_facts(*topo, 0, 1), opts, profiles);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--stoker-prefetch=16: over the admin's cap MaxPrefetch=8");
  }
}

}  // namespace
}  // namespace stoker
