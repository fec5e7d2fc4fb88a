// --stoker-verbose's lines: Slurm relays a task's output in 1024-byte messages and keeps a
// line whole only when it fits one, so two tasks' longer lines came out cut into each other.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "task_plan.hpp"

namespace stoker::spank {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(FaultsSpank, VerboseLinesStayWithinOneSlurmMessage) {
  Topology topo;
  topo.source = "this machine";
  TaskView task;
  task.topology = &topo;
  task.rank = 3;
  task.local_rank = 1;
  task.local_size = 2;
  TaskTuning t;
  t.plan.profile = "cv";
  for (int i = 0; i < 40; ++i)  // a GPU node's worth of reasons, and more
    t.plan.reasons.push_back({"field" + std::to_string(i), std::string(60, 'x')});
  const std::vector<std::string> lines = lines_of(describe(task, t, "applied"));
  ASSERT_GT(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("stoker: rank 3 (local 1/2): profile=cv ", 0), 0u) << lines[0];
  std::string reasons;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), kMaxVerboseLine) << "line " << i;
    if (i > 0) {
      EXPECT_EQ(lines[i].rfind("stoker: rank 3 reasons: field", 0), 0u) << lines[i];
    }
    reasons += lines[i].substr(lines[i].find("reasons:") + 8);
  }
  for (int i = 0; i < 40; ++i)  // every reason, whole, in order
    EXPECT_NE(reasons.find(" field" + std::to_string(i) + ": " + std::string(60, 'x') + ";"),
              std::string::npos);

  t.plan.reasons.resize(3);  // a short plan stays on one line
  EXPECT_EQ(lines_of(describe(task, t, "applied")).size(), 1u);
}

}  // namespace
}  // namespace stoker::spank
