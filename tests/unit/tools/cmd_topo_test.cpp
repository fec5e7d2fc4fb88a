// `stoker topo` end to end: the built binary on a generated fixture and on a bad file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "temp_tree.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

using test::CommandResult;
std::string stoker_binary() {
  return test::stoker_cli();
}
CommandResult run(const std::string& cmd) {
  return test::run_command(cmd);
}

class TopoCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(stoker_binary()))
      GTEST_SKIP() << stoker_binary() << " is not built (build the `stoker` target)";
  }
  test::TempTree tree;
};

TEST_F(TopoCommand, JsonOfTheDgxFixture) {
  tree.write("dgx.xml", test::dgx_a100_like());
  CommandResult r = run(stoker_binary() + " topo --json --topology " + tree.path("dgx.xml"));
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["numa_nodes"].size(), 8u);
  EXPECT_EQ(j["cores"], 128);
  EXPECT_EQ(j["smt_width"], 2);
  EXPECT_EQ(j["gpus"][0]["pci_bus_id"], "0000:07:00.0");
  EXPECT_EQ(j["gpus"][0]["numa"], nlohmann::json::array({3}));
  EXPECT_EQ(j["nics"].size(), 4u);
  EXPECT_EQ(j["numa_distances"][3][1], 12);
  EXPECT_FALSE(j.contains("memory_limit")) << "a file's topology says nothing of this process";
}

TEST_F(TopoCommand, TableNamesGpusNicsAndMemoryOnlyNodes) {
  tree.write("m.xml", test::gpu_on_memory_only_numa());
  CommandResult r = run(stoker_binary() + " topo --topology " + tree.path("m.xml"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(memory only)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0000:af:00.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mlx5_0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NUMA distances"), std::string::npos) << r.out;
}

TEST_F(TopoCommand, ThisMachineShowsTheProcessView) {
  CommandResult r = run(stoker_binary() + " topo --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["source"], "this machine");
  EXPECT_TRUE(j.contains("process_cpus"));
  EXPECT_GT(j["memory_limit"].get<uint64_t>(), 0u);
}

TEST_F(TopoCommand, BadFileExitsTwoNamingTheFile) {
  tree.write("bad.xml", "<topology><object type=");
  CommandResult r = run(stoker_binary() + " topo --topology " + tree.path("bad.xml") + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("stoker: error: " + tree.path("bad.xml")), std::string::npos) << r.out;
}

}  // namespace
}  // namespace stoker
