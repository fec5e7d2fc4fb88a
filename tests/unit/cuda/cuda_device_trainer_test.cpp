// The example trainer's bad-input and fallback behaviour on this (GPU-less) machine: it runs
// the built stoker_train, as a user would. Skips when the trainer is not built (the
// sanitizer builds build only the unit tests).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "gpu_probe.hpp"
#include "run_command.hpp"
#include "stoker/plan/plan_env.hpp"

namespace stoker {
namespace {

const std::string kTrainer = STOKER_BINARY_DIR "/runtime/examples/stoker_train";

struct TrainRun {
  int rc = -1;
  std::string out;
};

// Runs the trainer with `env` (" K=V ...") prepended, stdout and stderr together.
TrainRun train(const std::string& env, const std::string& args) {
  auto r =
      stoker::test::run_command("env -u STOKER_PLAN_VERSION -u RANK -u WORLD_SIZE -u SLURM_PROCID" +
                                env + " " + kTrainer + " " + args + " 2>&1");
  return {r.status, r.out};
}

#define SKIP_WITHOUT_TRAINER() \
  if (!std::filesystem::exists(kTrainer)) GTEST_SKIP() << kTrainer << " is not built"

TEST(Trainer, RefusesADatasetSmallerThanOneGlobalBatch) {
  SKIP_WITHOUT_TRAINER();
  test::TempDir dir;
  const std::string tokens = test::write_tokens(dir, 10 * 64 + 1);  // 10 windows of 64
  TrainRun r = train("", "--data " + tokens + " --kind tokens --seq-len 64 --batch-size 16");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("has 10 samples, fewer than one global batch (16 per rank x 1 ranks = "
                       "16)"),
            std::string::npos)
      << r.out;
}

TEST(Trainer, ASeveralRankWorldWithoutMpiNamesTheRankAndTheCause) {
  SKIP_WITHOUT_TRAINER();
  test::TempDir dir;
  const std::string tokens = test::write_tokens(dir, 400 * 64 + 1);
  TrainRun r = train(" RANK=1 WORLD_SIZE=2", "--data " + tokens + " --kind tokens --seq-len 64");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("error: rank 1/2: a world of 2 ranks (from RANK/WORLD_SIZE) but this "
                       "process was not launched under MPI"),
            std::string::npos)
      << r.out;
}

// The environment the plugin would export for a plan naming a GPU.
std::string plugin_env_with_gpu(const char* bus_id) {
  std::string env;
  for (const auto& [k, v] : plan_to_env(test::gpu_plan(bus_id))) env += " " + k + "='" + v + "'";
  return env;
}

TEST(Trainer, FallsBackToTheCpuWhenThePlansGpuIsUnusableAndSaysSo) {
  SKIP_WITHOUT_TRAINER();
  if (test::machine_has_gpu())
    GTEST_SKIP() << "a GPU is visible here; tests/gpu covers this machine";
  test::TempDir dir;
  const std::string tokens = test::write_tokens(dir, 2000 * 16 + 1);
  TrainRun r = train(plugin_env_with_gpu(test::kSomeBusId),
                     "--data " + tokens + " --kind tokens --seq-len 16 --epochs 2");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("plan from the STOKER_* environment"), std::string::npos) << r.out;
  const std::string why = kBuiltWithCuda ? "no usable GPU" : "stoker was built without CUDA";
  EXPECT_NE(r.out.find("device cpu (falling back to the CPU: GPU 0000:3b:00.0: " + why),
            std::string::npos)
      << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(loss first ([0-9.]+) last ([0-9.]+))")))
      << r.out;
  EXPECT_LT(std::stod(m[2]), std::stod(m[1])) << "the loss must go down: " << r.out;
  EXPECT_NE(r.out.find("samples/s"), std::string::npos);
  EXPECT_NE(r.out.find("input wait"), std::string::npos);

  // Insisting on the GPU turns the fallback into an error naming it and the reason.
  r = train(plugin_env_with_gpu(test::kSomeBusId),
            "--data " + tokens + " --kind tokens --seq-len 16 --device gpu");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("error: --device gpu: GPU 0000:3b:00.0: " + why), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace stoker
