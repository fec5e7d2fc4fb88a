// The plugin's topology cache on the real cluster: the first tuned step on a node discovers
// the topology and writes the cache (root's, 0644, its key in the name); the next step reads
// it and its tasks get the same plans.
#include <sys/stat.h>

#include "cluster_harness.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::test {
namespace {

class TopologyCache : public ClusterTest {};

// rank -> its STOKER_* plan variables (not STOKER_EXPORTED: it lists the rendezvous,
// whose MASTER_PORT differs from one job to the next; not STOKER_PLAN_SEAL: it names its step).
std::map<int, std::map<std::string, std::string>> plans(const std::string& out) {
  std::map<int, std::map<std::string, std::string>> p;
  for (const auto& [rank, vars] : parse_probe(out))
    for (const auto& [name, value] : vars)
      if (name.rfind("STOKER_", 0) == 0 && name != "STOKER_EXPORTED" && name != "STOKER_PLAN_SEAL")
        p[rank][name] = value;
  return p;
}

TEST_F(TopologyCache, ASecondStepReadsTheCacheTheFirstWroteAndPlansTheSame) {
  fs::remove_all(topology_cache());
  // Both emulated nodes are this host: one cache, the same boot id and hwloc.
  const std::string file =
      (topology_cache() / ("topology-" + topology_cache_key(false) + ".xml")).string();
  const std::string step = "srun -N1 -n2 --stoker --stoker-verbose " + probe();
  const RunResult first = run(step);
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_EQ(
      count_of(first.err, "(topology: no GPUs, no I/O devices; discovered, cached in " + file +
                              " (not read: folder " + topology_cache().string() + " is absent))"),
      2)
      << first.err;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0644u);

  const RunResult second = run(step);
  ASSERT_EQ(second.rc, 0) << second.err;
  EXPECT_EQ(count_of(second.err, "(topology: no GPUs, no I/O devices; read from " + file + ")"), 2)
      << second.err;
  EXPECT_EQ(count_of(second.err, "task_init took "), 2) << second.err;
  const auto a = plans(first.out), b = plans(second.out);
  ASSERT_EQ(a.size(), 2u) << first.out;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.at(0).at("STOKER_NICS"), "");  // a rank without GPU gets no NIC
  // slurmstepd skips hwloc's plugins for its own discovery; the tasks' environment is the job's.
  const RunResult env = run("srun -N1 -n1 --stoker printenv HWLOC_PLUGINS_BLACKLIST");
  EXPECT_EQ(env.rc, 1) << env.out;
}

TEST_F(TopologyCache, AStepWithGpusCachesTheTopologyWithDevices) {
  fs::remove_all(topology_cache());
  const std::string file =
      (topology_cache() / ("topology-" + topology_cache_key(true) + ".xml")).string();
  // The cluster's GPUs are fake, so the task runs untuned, but only after the node's setup.
  const std::string step = "srun -N1 -n1 --gpus-per-node=1 --stoker --stoker-verbose true";
  const RunResult first = run(step);
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_EQ(count_of(first.err, "(topology: discovered, cached in " + file), 1) << first.err;
  const RunResult second = run(step);
  EXPECT_EQ(count_of(second.err, "(topology: read from " + file + ")"), 1) << second.err;
}

}  // namespace
}  // namespace stoker::test
