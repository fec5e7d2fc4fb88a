// `stoker sampler`, run as a user would. Skips when the stoker binary was not built
// (the sanitizer builds only build the unit tests).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "run_command.hpp"
#include "stoker/distributed/sampler.hpp"

namespace {
const std::string kStoker = stoker::test::stoker_cli();

// Runs `stoker sampler ARGS`; returns its output (stdout and stderr) and exit status.
std::string sampler(const std::string& args, int* status) {
  auto r = stoker::test::run_command(kStoker + " sampler " + args + " 2>&1");
  *status = r.status;
  return r.out;
}

#define REQUIRE_STOKER() \
  if (!std::filesystem::exists(kStoker)) GTEST_SKIP() << kStoker << " was not built"
}  // namespace

TEST(SamplerCli, JsonShard) {
  REQUIRE_STOKER();
  int status = -1;
  EXPECT_EQ(sampler("--size 10 --world-size 4 --rank 3 --no-shuffle --json", &status),
            "{\"rank\": 3, \"world_size\": 4, \"epoch\": 0, \"seed\": 0, \"size\": 10, \"start\": "
            "0, \"length\": 3, \"indices\": [3, 7, 1]}\n");
  EXPECT_EQ(status, 0);
}

TEST(SamplerCli, ResumeAtMatchesTheLibrary) {
  REQUIRE_STOKER();
  stoker::SamplerOptions o;
  o.size = 1000;
  o.seed = 7;
  o.world_size = 3;
  o.rank = 2;
  stoker::DistributedSampler s(o);
  s.set_epoch(2);
  stoker::SamplerState st = s.state(0);
  st.consumed = 500;
  s.restore(st);
  std::string expected =
      "# rank 2 of 3, epoch 2, seed 7, 1000 samples, shuffle on, drop_last "
      "off: 167 indices from global position 500\n";
  for (uint64_t i = 0; i < s.length(); ++i) expected += std::to_string(s.at(i)) + "\n";
  int status = -1;
  EXPECT_EQ(
      sampler("--size 1000 --seed 7 --epoch 2 --world-size 3 --rank 2 --resume-at 500", &status),
      expected);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(sampler("--world-size 3 --rank 2 --state '" + st.to_string() + "'", &status), expected);
}

TEST(SamplerCli, BadInputs) {
  REQUIRE_STOKER();
  int status = -1;
  EXPECT_EQ(sampler("--size 1000 --world-size 4 --rank 3 --resume-at 1001", &status),
            "stoker: error: --resume-at: resume position 1001 is beyond the epoch of 1000 samples "
            "(give a global position from 0 to --size)\n");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(sampler("--size 10 --world-size 0", &status),
            "stoker: error: sampler world size: is 0; a job has at least one rank (set "
            "--world-size, WORLD_SIZE or SLURM_NTASKS to the number of ranks)\n");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(sampler("--world-size 4", &status),
            "stoker: error: --size: is required (the number of samples in the dataset) and must "
            "be > 0\n");
  EXPECT_EQ(status, 2);
}

// CLI11 read unsigned options with strtoull: `--seq-len -5` became 18446744073709551611.
// Every unsigned option of every subcommand refuses a negative value, naming the option.
TEST(FaultsCommandLine, NegativeValuesForUnsignedOptionsAreUsageErrors) {
  REQUIRE_STOKER();
  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {"bench tokens /dev/null --seq-len -5", "--seq-len"},
           {"bench tokens /dev/null --batch-size -8", "--batch-size"},
           {"bench images /dev/null --epochs -1", "--epochs"},
           {"bench tokens /dev/null --world-size 2 --rank -1", "--rank"},
           {"sampler --size 10 --world-size -2", "--world-size"},
           {"sampler --size=-10", "--size"}}) {
    const auto r = stoker::test::run_command(kStoker + " " + args + " 2>&1");
    EXPECT_NE(r.status, 0) << args << ": " << r.out;
    EXPECT_NE(r.out.find(option + ": -"), std::string::npos) << args << ": " << r.out;
    EXPECT_NE(r.out.find("is negative: give a whole number, 0 or more"), std::string::npos)
        << args << ": " << r.out;
    EXPECT_EQ(r.out.find("18446744073709551"), std::string::npos) << args << ": " << r.out;
  }
}
