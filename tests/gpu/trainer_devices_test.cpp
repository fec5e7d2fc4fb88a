// The example trainer on a GPU against the CPU (skipped without a GPU): the GPU
// run of a seed learns what the CPU run of the same seed learns (same batches, same start),
// and ranks on different devices stop with a message instead of hanging (NCCL ranks used to
// wait in the id broadcast for a CPU rank that was in MPI_Allreduce).
#include <fstream>
#include <regex>
#include <string>

#include "gpu_fixture.hpp"
#include "run_command.hpp"

namespace stoker {
namespace {

#define SKIP_WITHOUT_TRAINER() \
  if (std::string(STOKER_TRAIN).empty()) GTEST_SKIP() << "stoker_train is not built"

struct Losses {
  double first = 0, last = 0;
};

// "loss first X last Y" of the trainer's summary line.
Losses losses_of(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(loss first ([0-9.]+) last ([0-9.]+))"))) {
    ADD_FAILURE() << "no loss line in:\n" << out;
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2])};
}

std::string tokens(const test::TempDir& dir) {
  const std::string path = dir.file("tokens.bin");
  auto r = test::run_command(std::string(STOKER_MAKE_DATA) + " tokens " + path + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  return path;
}

std::string trainer(const std::string& args) {
  return "env -u STOKER_PLAN_VERSION -u RANK -u WORLD_SIZE " + std::string(STOKER_TRAIN) + " " +
         args;
}

TEST(Trainer, TheGpuLearnsWhatTheCpuLearnsFromTheSameSeed) {
  STOKER_GPU_OR_SKIP(bus);
  SKIP_WITHOUT_TRAINER();
  test::TempDir dir;
  const std::string common =
      "--data " + tokens(dir) + " --kind tokens --seq-len 16 --max-steps 150 --seed 5";
  const auto gpu = test::run_command(trainer(common + " --device gpu") + " 2>&1");
  const auto cpu = test::run_command(trainer(common + " --device cpu") + " 2>&1");
  ASSERT_EQ(gpu.status, 0) << gpu.out;
  ASSERT_EQ(cpu.status, 0) << cpu.out;
  ASSERT_NE(gpu.out.find("device gpu"), std::string::npos) << gpu.out;
  const Losses g = losses_of(gpu.out), c = losses_of(cpu.out);
  std::printf(
      "[ figures  ] trainer loss, seed 5, 150 steps: GPU first %.4f last %.4f, CPU "
      "first %.4f last %.4f\n",
      g.first, g.last, c.first, c.last);
  // The same first batch on the same weights: equal but for the order of float sums.
  EXPECT_NEAR(g.first, c.first, 1e-3 * c.first);
  // 150 steps later the rounding has drifted a little; wrong data or a stale buffer would
  // not learn the same.
  EXPECT_NEAR(g.last, c.last, 0.02 * c.last);
  EXPECT_LT(g.last, g.first) << "the GPU run must learn";
}

// "K=V K=V" of scripts/mpi-loopback.env: Open MPI over the loopback, as the mpi tests run.
std::string loopback_env() {
  std::ifstream f(std::string(STOKER_SOURCE_DIR) + "/scripts/mpi-loopback.env");
  std::string env, line;
  while (std::getline(f, line)) {
    if (!line.empty() && line[0] >= 'A' && line[0] <= 'Z') env += " " + line;
  }
  return env;
}

TEST(FaultsTrainer, RanksOnAGpuAndOnTheCpuStopWithAMessage) {
  STOKER_GPU_OR_SKIP(bus);
  SKIP_WITHOUT_TRAINER();
  if (std::string(STOKER_MPIEXEC).empty()) GTEST_SKIP() << "built without MPI";
  test::TempDir dir;
  const std::string args = " --data " + tokens(dir) + " --kind tokens --seq-len 16 --max-steps 20";
  const std::string mpirun = std::string(STOKER_MPIEXEC) + " " + STOKER_MPIEXEC_FLAGS;
  // Rank 0 on the GPU, rank 1 on the CPU; `timeout` turns a hang into status 124.
  const auto r = test::run_command("timeout 120 env" + loopback_env() + " " + mpirun + " -np 1 " +
                                   trainer("--device gpu" + args) + " : -np 1 " +
                                   trainer("--device cpu" + args) + " 2>&1");
  ASSERT_NE(r.status, 124) << "the job hung:\n" << r.out;
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the ranks do not train on the same device: GPU on rank(s) 0, CPU on "
                       "rank(s) 1"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace stoker
