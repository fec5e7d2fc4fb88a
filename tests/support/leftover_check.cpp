// Linked into every unit test program: when the run holds a Faults* suite (the faults
// family, docs/reliability.md), the process must end it with the threads it began with and
// no child process. Threads that end by themselves (a loader's workers abandoned after an
// interrupt finish their sample first) get a generous while.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

int threads_now() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.exists();
  return n;
}

std::string children_now() {  // pids of this process's children, space separated
  std::string all;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream f(e.path() / "children");
    std::string pids;
    std::getline(f, pids);
    all += pids;
  }
  return all;
}

bool runs_a_faults_suite() {
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  for (int i = 0; i < u.total_test_suite_count(); ++i) {
    const testing::TestSuite& s = *u.GetTestSuite(i);
    if (s.should_run() && std::string(s.name()).rfind("Faults", 0) == 0) return true;
  }
  return false;
}

class LeftoverCheck : public testing::Environment {
 public:
  void SetUp() override {
    // TSan starts its runtime's background thread with the first thread a program creates:
    // start (and join) one first, so that the count below includes it.
    std::thread([] {}).join();
    threads_ = threads_now();
  }
  void TearDown() override {
    if (!runs_a_faults_suite()) return;
    for (int i = 0; i < 1000 && (threads_now() > threads_ || !children_now().empty()); ++i) {
      ::usleep(10000);
    }
    EXPECT_LE(threads_now(), threads_) << "a fault test left threads behind";
    EXPECT_EQ(children_now(), "") << "a fault test left child processes behind";
  }

 private:
  int threads_ = 0;
};

[[maybe_unused]] testing::Environment* const g_leftover_check =
    testing::AddGlobalTestEnvironment(new LeftoverCheck);

}  // namespace
