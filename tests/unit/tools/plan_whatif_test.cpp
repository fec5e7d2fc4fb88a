// Whole-node what-ifs end to end: `stoker plan` over several topologies (one row per node type
// and rank, the same plan as the one-rank form), and the SVG pictures of `stoker plan --svg`
// and `stoker topo --svg`, parsed with Python's xml.etree.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "run_command.hpp"
#include "temp_tree.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kShared = STOKER_SHARED_DIR "/topologies";

// Prints {"texts": [...every <text>'s content...], "rects": N, "lines": N} for an SVG file; exits
// non-zero when it does not parse as XML or its root is not an SVG element.
const char* kSvgReader = R"(import json, sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
assert root.tag == ns + 'svg', root.tag
print(json.dumps({'texts': [''.join(t.itertext()) for t in root.iter(ns + 'text')],
                  'rects': sum(1 for _ in root.iter(ns + 'rect')),
                  'lines': sum(1 for _ in root.iter(ns + 'line'))}))
)";

class WholeNode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(test::stoker_cli()))
      GTEST_SKIP() << test::stoker_cli() << " is not built (build the `stoker` target)";
    tree.write("dgx.xml", test::dgx_a100_like());
    tree.write("four.xml", test::four_gpu_two_socket(true));
    tree.write("svg_reader.py", kSvgReader);
  }
  test::CommandResult plan(const std::string& args) {
    return test::run_command(test::stoker_cli() + " plan " + args + " 2>&1");
  }
  json plan_json(const std::string& args) {
    const auto r = plan(args + " --json");
    EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
    return r.status == 0 ? json::parse(r.out) : json();
  }
  // The picture's texts, rects and lines, as svg_reader.py says; fails the test when it does
  // not parse.
  json svg_read(const std::string& file) {
    const auto r =
        test::run_command("/usr/bin/python3 " + tree.path("svg_reader.py") + " " + file + " 2>&1");
    EXPECT_EQ(r.status, 0) << file << " does not parse as SVG:\n" << r.out;
    return r.status == 0 ? json::parse(r.out) : json{{"texts", json::array()}, {"lines", 0}};
  }
  std::vector<std::string> svg_texts(const std::string& file) {
    return svg_read(file)["texts"].get<std::vector<std::string>>();
  }
  static bool has_text(const std::vector<std::string>& texts, const std::string& prefix) {
    for (const auto& t : texts)
      if (t.starts_with(prefix)) return true;
    return false;
  }
  test::TempTree tree;
};

TEST_F(WholeNode, OneRowPerNodeTypeAndRankAsTheOneRankPlanSaysIt) {
  const std::string nodes = "--topology " + tree.path("dgx.xml") + " --topology " +
                            tree.path("four.xml") + " --local-size 4 --profile cv --mem-limit 64G";
  const json j = plan_json(nodes);
  ASSERT_EQ(j["rows"].size(), 8u) << j.dump(2);
  EXPECT_EQ(j["local_size"], 4);
  for (size_t i = 0; i < 8; ++i) {
    const json& row = j["rows"][i];
    const std::string xml = i < 4 ? "dgx.xml" : "four.xml";
    EXPECT_EQ(row["node"], i < 4 ? "dgx" : "four");
    EXPECT_EQ(row["local_rank"], static_cast<int>(i % 4));
    EXPECT_EQ(row["profile"], "cv");
    const json one = plan_json("--topology " + tree.path(xml) + " --local-size 4 --local-rank " +
                               std::to_string(i % 4) + " --profile cv --mem-limit 64G");
    for (const char* key : {"cpus", "numa", "gpu", "nics", "workers", "prefetch", "mem_budget"})
      EXPECT_EQ(row[key], one[key]) << xml << " rank " << i % 4 << " " << key;
  }
  // The DGX-like node's 4 ranks take GPUs 0-3, each with its NUMA node's cores.
  EXPECT_EQ(j["rows"][0]["gpu"], "0000:07:00.0");
  EXPECT_EQ(j["rows"][0]["numa"], json::array({3}));
  EXPECT_GT(j["rows"][0]["cores"].get<int>(), 0);

  const auto table = plan(nodes);
  ASSERT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("node  rank  cpus"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\nfour  3     "), std::string::npos) << table.out;
}

TEST_F(WholeNode, ARankGivenMeansThatRankOnEveryNode) {
  const json j = plan_json("--topology " + tree.path("dgx.xml") + " --topology " +
                           tree.path("four.xml") + " --local-size 8 --local-rank 5");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["local_rank"], 5);
  EXPECT_EQ(j["rows"][1]["local_rank"], 5);
}

TEST_F(WholeNode, EverySharedTopology) {
  if (!fs::is_directory(kShared))
    GTEST_SKIP() << kShared << " is absent: shared topologies not tested";
  std::string args;
  int files = 0;
  for (const auto& e : fs::directory_iterator(kShared)) {
    if (e.path().extension() != ".xml") continue;
    args += " --topology " + e.path().string();
    ++files;
  }
  ASSERT_GT(files, 0);
  // --mem-limit: 16em64t-4s2c2t-offlines.xml records no memory.
  const json j = plan_json(args + " --local-size 2 --profile nlp --mem-limit 16G");
  ASSERT_EQ(j["rows"].size(), 2u * files);
  std::set<std::string> nodes;
  for (const json& row : j["rows"]) {
    nodes.insert(row["node"]);
    EXPECT_GE(row["workers"].get<int>(), 1) << row.dump();
    EXPECT_LE(row["prefetch"].get<uint64_t>() * row["batch_bytes"].get<uint64_t>(),
              row["mem_budget"].get<uint64_t>())
        << row.dump();
  }
  EXPECT_EQ(nodes.size(), static_cast<size_t>(files));
  std::cout << "planned 2 ranks on each of " << files << " shared topologies\n";
}

TEST_F(WholeNode, PlanPictureNamesEveryRankItsGpuAndNic) {
  const std::string svg = tree.path("dgx.svg");
  const auto r = plan("--topology " + tree.path("dgx.xml") + " --local-size 8 --svg " + svg);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("picture of dgx: " + svg), std::string::npos) << r.out;
  const auto texts = svg_texts(svg);
  ASSERT_FALSE(texts.empty());
  const json rows = plan_json("--topology " + tree.path("dgx.xml") + " --local-size 8")["rows"];
  for (const json& row : rows) {
    const std::string rank = "rank " + std::to_string(row["local_rank"].get<int>());
    EXPECT_TRUE(has_text(texts, rank + ": cpus " + row["cpus"].get<std::string>()))
        << rank << " has no legend line";
    EXPECT_TRUE(has_text(texts, row["gpu"].get<std::string>())) << rank << "'s GPU is not drawn";
    EXPECT_TRUE(has_text(texts, rank)) << rank;  // its GPU box names it
  }
  for (const char* nic : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"})
    EXPECT_TRUE(has_text(texts, nic)) << nic;
  EXPECT_TRUE(has_text(texts, "NUMA 7"));
  EXPECT_TRUE(has_text(texts, "Package 1"));
}

// The spill in the picture: each rank's cores on a GPU-less node are hatched in its colour,
// the heading says what hatching means and each legend line names its spilled CPUs. A profile
// with SpillCores=no draws neither.
TEST_F(WholeNode, SpilledCoresAreHatchedAndNamed) {
  const std::string svg = tree.path("dgx.svg"), xml = tree.path("dgx.xml");
  ASSERT_EQ(plan("--topology " + xml + " --local-size 8 --svg " + svg).status, 0);
  const json read = svg_read(svg);
  const auto texts = read["texts"].get<std::vector<std::string>>();
  EXPECT_TRUE(has_text(texts, "Hatched: a rank's worker cores spilled from a NUMA node"));
  EXPECT_GT(read["lines"].get<int>(), 64);  // every spilled core carries hatching
  // Rank 0 (GPU 0 on node 3) has node 0's first 8 cores as spilled worker cores.
  EXPECT_TRUE(has_text(texts,
                       "rank 0: cpus 0-7,48-55,128-135,176-183 (main 48,176, spilled "
                       "0-7,128-135), NUMA 3"));
  ASSERT_EQ(plan("--topology " + xml + " --local-size 8 --profile nlp --svg " + svg).status, 0);
  EXPECT_FALSE(has_text(svg_texts(svg), "Hatched"));
  EXPECT_EQ(svg_read(svg)["lines"].get<int>(), 0);
}

TEST_F(WholeNode, SixteenRanksOnTheSharedDgx2) {
  const std::string xml = kShared + "/nvidiaDGX2.xml";
  if (!fs::exists(xml)) GTEST_SKIP() << xml << " is absent: shared topologies not tested";
  const std::string svg = tree.path("dgx2.svg");
  ASSERT_EQ(plan("--topology " + xml + " --local-size 16 --profile cv --svg " + svg).status, 0);
  const auto texts = svg_texts(svg);
  for (int r = 0; r < 16; ++r)
    EXPECT_TRUE(has_text(texts, "rank " + std::to_string(r) + ": cpus ")) << "rank " << r;
  int gpus = 0;
  for (const auto& t : texts) gpus += t.starts_with("GPU ");
  EXPECT_EQ(gpus, 16);
  // Ranks share cores near their GPUs: rank 8 (GPU on node 1) on node 1's core 24, not on
  // node 0's core 0 as rank k mod 4 put it before (docs/img/dgx2-16-ranks.svg).
  EXPECT_TRUE(has_text(texts, "rank 8: cpus 24 (main 24), NUMA 1,"));
  EXPECT_TRUE(has_text(texts, "rank 12: cpus 24 (main 24), NUMA 1,"));
}

TEST_F(WholeNode, OnePicturePerNodeType) {
  const auto r = plan("--topology " + tree.path("dgx.xml") + " --topology " +
                      tree.path("four.xml") + " --local-size 2 --svg " + tree.path("out.svg"));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* name : {"out-dgx.svg", "out-four.svg"}) {
    ASSERT_TRUE(fs::exists(tree.path(name))) << name << "\n" << r.out;
    EXPECT_TRUE(has_text(svg_texts(tree.path(name)), "rank 1: cpus ")) << name;
  }
}

TEST_F(WholeNode, TopoPictureShowsEveryCoreGpuAndNic) {
  const std::string svg = tree.path("topo.svg");
  const auto r = test::run_command(test::stoker_cli() + " topo --topology " +
                                   tree.path("four.xml") + " --svg " + svg + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto texts = svg_texts(svg);
  for (const char* s : {"Package 0", "Package 1", "NUMA 0", "NUMA 1", "0000:1a:00.0",
                        "0000:b1:00.0", "mlx5_0", "mlx5_1", "eno1", "0,32", "31,63"})
    EXPECT_TRUE(has_text(texts, s)) << s;
  EXPECT_FALSE(has_text(texts, "rank ")) << "no plan, no ranks";
}

class FaultsPlanWholeNode : public WholeNode {};

TEST_F(FaultsPlanWholeNode, BadInputsExitTwoNamingThem) {
  auto fails_naming = [&](const std::string& args, const std::string& named) {
    const auto r = plan(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("stoker: error: " + named), std::string::npos) << args << "\n" << r.out;
  };
  const std::string two = "--topology " + tree.path("dgx.xml") + " --topology ";
  fails_naming(two + tree.path("four.xml") + " --local-size 2 --local-rank 2", "--local-rank: 2");
  fails_naming(two + tree.path("four.xml") + " --local-size 0", "--local-size: 0");
  fails_naming(two + tree.path("nope.xml") + " --local-size 2", tree.path("nope.xml"));
  fails_naming(two + tree.path("four.xml") + " --svg " + tree.path("no/such/dir/x.svg"),
               tree.path("no/such/dir/x-dgx.svg"));
  // A node type whose XML records no memory: the error says which, and what to give.
  const std::string offlines = kShared + "/16em64t-4s2c2t-offlines.xml";
  if (fs::exists(offlines)) {
    const auto r = plan(two + offlines + " --local-size 2");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("stoker: error: " + offlines + ": memory limit: "), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("64G"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace stoker
