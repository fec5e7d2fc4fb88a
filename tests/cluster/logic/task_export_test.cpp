#include "task_export.hpp"

#include <gtest/gtest.h>

#include <map>

#include "stoker/plan/profiles.hpp"
#include "stoker/plan/topology.hpp"
#include "topology_fixtures.hpp"

namespace stoker::spank {
namespace {

TEST(TaskExport, ThePlanAndTheLaunchersNames) {
  const Topology topo = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu");
  World w;
  w.kind = WorldKind::SlurmTask;
  w.topology = &topo;
  w.step = {topo.allowed_cpus, "the test"};
  w.gpu_ids = "0,1";
  w.memory = uint64_t{32} << 30;
  w.local_rank = 1;
  w.local_size = 2;
  const PlanInput in = plan_input(w, {}, builtin_profiles());
  const Plan plan = make_plan(in);
  TaskIds ids{5, 8, 1, 2, 12345, "localhost,n2"};
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : task_env(plan, ids)) env[k] = v;
  EXPECT_EQ(env.at("STOKER_GPU"), "0000:3d:00.0");
  EXPECT_EQ(env.at("RANK"), "5");
  EXPECT_EQ(env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(env.at("WORLD_SIZE"), "8");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "localhost");
  EXPECT_EQ(env.at("MASTER_PORT"), "32345");
  EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  const std::vector<std::string> lines = describe(ids, w, in, plan, "applied");
  ASSERT_FALSE(lines.empty());
  const std::string& line = lines.front();
  EXPECT_EQ(line.rfind("stoker: rank 5 (local 1/2): profile=balanced cpus=", 0), 0u) << line;
  EXPECT_NE(line.find("; from cpus=" + topo.allowed_cpus.to_string() + " (the test) gpus=0,1 mem=" +
                      std::to_string(uint64_t{16} << 30) + " topology=4gpu; binding: applied;"),
            std::string::npos)
      << line;
  for (const std::string& l : lines) EXPECT_LE(l.size(), kMaxLine) << l;
  EXPECT_EQ(line.find(" input: "), std::string::npos) << "said by from cpus=... already";
}

TEST(FaultsTaskExport, LongReasonsContinueOnLinesOfTheirOwn) {
  const Topology topo = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu");
  World w;
  w.topology = &topo;
  PlanInput in;
  Plan plan;
  for (int i = 0; i < 40; ++i) plan.reasons.push_back({"cpus", std::string(60, 'x')});
  plan.reasons.push_back({"nics", std::string(5000, 'y')});
  const std::vector<std::string> lines = describe(TaskIds{}, w, in, plan, "applied");
  ASSERT_GT(lines.size(), 2u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), kMaxLine);
    if (i) {
      EXPECT_EQ(lines[i].rfind("stoker: rank 0 (more reasons): ", 0), 0u) << lines[i];
    }
  }
}

}  // namespace
}  // namespace stoker::spank
