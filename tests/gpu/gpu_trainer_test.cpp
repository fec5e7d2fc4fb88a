// The example trainer on one GPU, image pipeline: the step waits for input < 5 % of the time,
// and the loss goes down.
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "gpu_fixture.hpp"

namespace stoker {
namespace {

std::string run(const std::string& cmd, int* rc) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (f && fgets(buf, sizeof buf, f)) out += buf;
  *rc = f ? pclose(f) : -1;
  return out;
}

TEST(Trainer, InputWaitUnderFivePercentOnTheImagePipeline) {
  STOKER_GPU_OR_SKIP(bus);
  if (std::string(STOKER_TRAIN).empty()) GTEST_SKIP() << "stoker_train is not built";
  test::TempDir dir;
  const std::string data = dir.file("images");
  int rc = 0;
  std::string out = run(std::string(STOKER_MAKE_DATA) + " images " + data +
                            " --classes 8 --per-class 512 --width 96 --height 72",
                        &rc);
  ASSERT_EQ(rc, 0) << out;
  // A model heavy enough to be the bottleneck, as a real one is: 64x64 crops, 2048 hidden.
  out = run("env -u STOKER_PLAN_VERSION " + std::string(STOKER_TRAIN) + " --data " + data +
                " --device gpu --size 64 --hidden 2048 --batch-size 256 --epochs 4",
            &rc);
  std::printf("%s", out.c_str());
  ASSERT_EQ(rc, 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(input wait ([0-9.]+)% of step time)")))
      << out;
  const double wait = std::stod(m[1]);
  std::printf("[ figures  ] trainer input wait %.1f %% of step time (images, one GPU)\n", wait);
  EXPECT_LT(wait, 5.0);
  // Fast is not enough: the batches the GPU reads must be the data (it learns).
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(loss first ([0-9.]+) last ([0-9.]+))")))
      << out;
  EXPECT_LT(std::stod(m[2]), std::stod(m[1])) << "the loss must go down: " << out;
  EXPECT_NE(out.find("device gpu"), std::string::npos) << out;
}

}  // namespace
}  // namespace stoker
