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
  const std::string line = describe(ids, w, in, plan, "applied");
  EXPECT_EQ(line.rfind("stoker: rank 5 (local 1/2): profile=balanced cpus=", 0), 0u) << line;
  EXPECT_NE(line.find("; from cpus=" + topo.allowed_cpus.to_string() + " (the test) gpus=0,1 mem=" +
                      std::to_string(uint64_t{16} << 30) + " topology=4gpu; binding: applied;"),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace stoker::spank
