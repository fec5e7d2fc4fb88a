// stoker beside NVIDIA pyxis + enroot (scripts/containers.sh): a tuned step runs in a
// container image that holds python3 and numpy and nothing of stoker; inside it, each rank
// runs where its plan says and sees the plan's STOKER_* variables. Skips (with the reason)
// where pyxis, enroot or the image is missing: `scripts/containers.sh install` and `image`.
#include <chrono>
#include <cstdio>
#include <set>
#include <string>

#include "cluster_harness.hpp"
#include "stoker/common/cpuset.hpp"

namespace stoker::test {
namespace {

class Containers : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const RunResult status = run(script() + " status");
    if (status.rc != 0) GTEST_SKIP() << "no containers here: " << status.out << status.err;
    image_ = run(script() + " image").out;
    while (!image_.empty() && image_.back() == '\n') image_.pop_back();
    // pyxis's line in plugstack.conf.d/pyxis.conf, sorted before stoker.conf. Started from
    // the .sqsh by squashfuse: ~4 s a step, where unpacking the image on each node takes ~18.
    const RunResult hookup = run(script() + " plugstack '" + dir().string() + "' use_squashfuse=1");
    ASSERT_EQ(hookup.rc, 0) << hookup.out << hookup.err;
  }
  void TearDown() override {
    fs::remove(dir() / "plugstack.conf.d" / "pyxis.conf");
    ClusterTest::TearDown();
  }
  static std::string script() { return STOKER_SOURCE_DIR "/scripts/containers.sh"; }
  std::string image_;
};

// Run by the image's python3 in each task: probe.sh's "<rank> KEY=VALUE" lines (the task's
// CPU affinity, its node, its STOKER_* variables) and whether the host's hwloc is visible
// (it is on the host, where the plugin's library needs it; not in the image).
const char* kPythonProbe =
    R"(import glob, os
r = os.environ.get("SLURM_PROCID", "x")
print(r, "node=" + os.environ.get("SLURMD_NODENAME", ""))
print(r, "affinity=" + ",".join(str(c) for c in sorted(os.sched_getaffinity(0))))
print(r, "hwloc=" + str(len(glob.glob("/usr/lib/*/libhwloc.so*"))))
for k, v in sorted(os.environ.items()):
    if k.startswith("STOKER_"):
        print(r, k + "=" + v)
)";

TEST_F(Containers, ATunedStepInAnImageRunsWhereItsPlanSaysAndSeesThePlan) {
  // The same step on the host first (no container: pyxis does nothing without
  // --container-image): the plan variables the ranks must find inside the container too.
  const RunResult host = run("srun -N2 -n4 --stoker " + probe());
  ASSERT_EQ(host.rc, 0) << host.err;
  const Probe on_host = parse_probe(host.out);
  ASSERT_EQ(on_host.size(), 4u) << host.out;

  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run("srun -N2 -n4 --stoker --container-image=" + image_ + " python3 -c '" +
                          kPythonProbe + "'");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  std::printf("the containerized step took %.1f s\n", seconds);
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out << r.err;
  std::set<std::string> nodes;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out);
    EXPECT_EQ(env.at("hwloc"), "0") << "not in the image: the host's libhwloc is visible";
    ASSERT_TRUE(env.count("STOKER_CPUS"));
    const CpuSet affinity = CpuSet::parse(env.at("affinity"));
    EXPECT_FALSE(affinity.empty());
    EXPECT_EQ(affinity, CpuSet::parse(env.at("STOKER_CPUS")))
        << "the rank runs where its plan says";
    // Every STOKER_* variable of the host's step arrives, with the same value. Except the
    // run record folder, named by job and step (another job here).
    const auto& host_env = on_host.at(rank);
    for (const auto& [name, value] : host_env) {
      if (name.rfind("STOKER_", 0) != 0) continue;
      ASSERT_TRUE(env.count(name)) << name << " did not reach the container";
      if (name != "STOKER_RUN_RECORD_DIR" && name != "STOKER_EXPORTED") {
        EXPECT_EQ(env.at(name), value) << name;
      }
    }
    nodes.insert(env.at("node"));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
}

}  // namespace
}  // namespace stoker::test
