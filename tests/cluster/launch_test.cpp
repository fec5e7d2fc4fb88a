// The launch environment every task of a step with stoker on gets: the rendezvous PyTorch
// launchers read (RANK ... MASTER_PORT), tuned or not, one address and one port per step;
// and the thread counts of OpenMP, MKL and OpenBLAS from the plan's main cores.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cluster_harness.hpp"
#include "stoker/common/cpuset.hpp"

namespace stoker::test {
namespace {

class Launch : public ClusterTest {};
class FaultsLaunch : public ClusterTest {};  // labelled faults too (CMakeLists.txt)

const char* const kRendezvous[] = {"RANK",        "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                   "MASTER_ADDR", "MASTER_PORT"};

// The fault: MASTER_PORT came from the job id alone, so two steps of one job running at the
// same time (srun ... & srun ... & wait) shared a port and the second rank 0 could not bind.
TEST_F(FaultsLaunch, ConcurrentStepsOfOneJobGetTheirOwnPorts) {
  const fs::path a = jobs() / "step-a.out", b = jobs() / "step-b.out";
  fs::remove(a);
  fs::remove(b);
  // --exact: each step takes one CPU per node, so both run at once in the job's two.
  const std::string step = "srun --exact -N2 -n2 -c1 --stoker " + probe();
  write_file(jobs() / "two-steps.sbatch", "#!/bin/sh\n#SBATCH -N2 --ntasks-per-node=2 -o " +
                                              (jobs() / "two-steps.out").string() + "\n" + step +
                                              " >" + a.string() + " &\n" + step + " >" +
                                              b.string() + " &\nwait\n");
  const RunResult r = run("sbatch --wait two-steps.sbatch");
  ASSERT_EQ(r.rc, 0) << r.err << slurp(jobs() / "two-steps.out");
  std::set<std::string> ports, steps, addrs;
  for (const fs::path& out : {a, b}) {
    const Probe p = parse_probe(slurp(out));
    ASSERT_EQ(p.size(), 2u) << slurp(out);
    std::set<std::string> step_ports;
    for (const auto& [rank, env] : p) {
      SCOPED_TRACE(out.string() + " rank " + std::to_string(rank));
      for (const char* name : kRendezvous) ASSERT_TRUE(env.count(name)) << name;
      step_ports.insert(env.at("MASTER_PORT"));
      steps.insert(env.at("SLURM_STEP_ID"));
      addrs.insert(env.at("MASTER_ADDR"));
    }
    EXPECT_EQ(step_ports.size(), 1u) << "one port per step";
    ports.insert(*step_ports.begin());
  }
  EXPECT_EQ(steps.size(), 2u);
  EXPECT_EQ(ports.size(), 2u) << "the two steps share a port";
  // One address for every rank of both steps: n1's NodeAddr, not a node's own hostname.
  EXPECT_EQ(addrs, (std::set<std::string>{"127.0.0.1"}));
}

// The fault: a task the plugin leaves untuned (here: GPU ids it cannot locate) got no
// rendezvous at all, and the job relied on each template's own fallbacks.
TEST_F(FaultsLaunch, AnUntunedTaskStillGetsTheRendezvous) {
  use_plugin_on_a_cpu_only_node();
  const RunResult r = run("srun -N2 -n2 --gres=gpu:1 --stoker " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "cannot locate GPU"), 2) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 2u) << r.out;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + "\n" + r.out);
    EXPECT_FALSE(env.count("STOKER_PLAN_VERSION")) << "untuned";
    EXPECT_FALSE(env.count("OMP_NUM_THREADS")) << "no plan, no thread count";
    for (const char* name : kRendezvous) EXPECT_TRUE(env.count(name)) << name;
    EXPECT_EQ(env.at("RANK"), std::to_string(rank));
    EXPECT_EQ(env.at("WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), p.begin()->second.at("MASTER_PORT"));
  }
}

TEST_F(Launch, ThreadCountsAreThePlansMainCores) {
  const RunResult r = run("srun -N2 -n4 --stoker " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + "\n" + r.out);
    const std::string main = std::to_string(CpuSet::parse(env.at("STOKER_MAIN_CPUS")).count());
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), main);
    EXPECT_EQ(env.at("MKL_NUM_THREADS"), main);
    EXPECT_EQ(env.at("OPENBLAS_NUM_THREADS"), main);
  }
  // torch (1.13, /usr/bin/python3) sizes its intra-op pool from OMP_NUM_THREADS.
  const RunResult t =
      run("srun -N1 -n1 -c2 --stoker /usr/bin/python3 -c 'import os, torch; "
          "print(os.environ[\"OMP_NUM_THREADS\"], torch.get_num_threads())'");
  if (t.rc == 0) {
    const auto words = lines_of(t.out);
    ASSERT_FALSE(words.empty()) << t.out;
    const std::string& line = words.back();
    const size_t sp = line.find(' ');
    ASSERT_NE(sp, std::string::npos) << line;
    EXPECT_EQ(line.substr(0, sp), line.substr(sp + 1)) << "torch threads differ from the plan";
  } else {
    EXPECT_NE(t.err.find("No module named 'torch'"), std::string::npos) << t.err;
  }
}

TEST_F(Launch, TheUsersThreadCountsAndRendezvousAreKept) {
  const RunResult r = run("OMP_NUM_THREADS=7 MASTER_PORT=29999 srun -N2 -n2 --stoker " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 2u) << r.out;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + "\n" + r.out);
    EXPECT_TRUE(env.count("STOKER_PLAN_VERSION"));
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "7");
    EXPECT_EQ(env.at("MASTER_PORT"), "29999");
    EXPECT_EQ(env.at("MKL_NUM_THREADS"),
              std::to_string(CpuSet::parse(env.at("STOKER_MAIN_CPUS")).count()));
  }
}

// With pyxis's line first, an image's environment reaches each task before stoker's
// task_init; pyxis remaps RANK and NGC's enroot hook sets WORLD_SIZE to what stoker sets as
// well, and the line named those as "replaced", on every rank. A stand-in plugin sets them
// (and a thread count of its own) before stoker's: the line names the real change only, once
// per node.
TEST_F(FaultsLaunch, AnotherPluginsValuesAreNamedOncePerNodeAndOnlyWhenTheyDiffer) {
  const fs::path before = dir() / "plugstack.conf.d" / "a-env-before-stoker.conf";
  write_file(before, "optional " STOKER_ENV_BEFORE_PLUGIN "\n");
  const RunResult r = run("srun -N2 -n4 --stoker --stoker-profile=cv " + probe());
  fs::remove(before);
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out;
  for (const auto& [rank, env] : p) {
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), env.at("MKL_NUM_THREADS")) << "the plan's, not 7";
    EXPECT_EQ(env.at("RANK"), std::to_string(rank));
  }
  EXPECT_EQ(count_of(r.err, "set before the plugin planned"), 2) << "once per node:\n" << r.err;
  EXPECT_EQ(count_of(r.err, "replaced by the plan's: OMP_NUM_THREADS=7\n"), 2) << r.err;
  EXPECT_EQ(r.err.find("RANK="), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("WORLD_SIZE="), std::string::npos) << r.err;
}

// A step the plugin leaves untuned inside a tuned batch step (batch_step=yes, then
// `srun --stoker=off`) inherits the batch step's STOKER_* and seal: its task took the batch
// step's plan for its own. The seal names its step; the batch script's own process (Slurm sets
// no SLURM_STEP_ID there) keeps the plugin's plan, the inner step's task plans itself.
TEST_F(FaultsLaunch, AnUntunedStepInsideATunedBatchStepPlansItself) {
  use_plugin(default_args() + " batch_step=yes");
  const fs::path batch = jobs() / "batch-plan.json", inner = jobs() / "inner-plan.json";
  fs::remove(batch);
  fs::remove(inner);
  write_file(jobs() / "seal.sbatch", "#!/bin/sh\n#SBATCH -N1 -n1 --stoker --stoker-profile=cv -o " +
                                         (jobs() / "seal.out").string() +
                                         "\n" STOKER_CLI " plan --json > " + batch.string() +
                                         "\nsrun -n1 --stoker=off " STOKER_CLI " plan --json > " +
                                         inner.string() + "\n");
  const RunResult r = run("sbatch --wait seal.sbatch");
  ASSERT_EQ(r.rc, 0) << r.err << slurp(jobs() / "seal.out");
  const auto source = [](const fs::path& p) {
    return nlohmann::json::parse(slurp(p)).at("source").get<std::string>();
  };
  EXPECT_EQ(source(batch).rfind("the STOKER_* environment", 0), 0u) << source(batch);
  EXPECT_EQ(source(inner).rfind("computed", 0), 0u) << "the batch step's plan was taken";
  EXPECT_NE(slurp(jobs() / "seal.out").find("its STOKER_* plan was inherited from that step"),
            std::string::npos)
      << slurp(jobs() / "seal.out");
}

}  // namespace
}  // namespace stoker::test
