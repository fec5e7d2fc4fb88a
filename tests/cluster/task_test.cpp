// What tasks get: the environment on every rank, CPU binding read back from each
// task, and (with fake GPUs and an admin topology XML) the same plan `stoker plan`
// prints for the same inputs.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cluster_harness.hpp"
#include "stoker/common/cpuset.hpp"
#include "stoker/plan/plan_env.hpp"
#include "topology_fixtures.hpp"

namespace stoker::test {
namespace {

class Task : public ClusterTest {};

TEST_F(Task, EnvOnEveryRankOfTwoNodes) {
  const RunResult r = run("srun -N2 -n4 --stoker " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out;
  std::set<std::string> nodes;
  std::map<std::string, std::set<std::string>> local_ranks;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    for (const char* key : {"STOKER_PLAN_VERSION", "STOKER_PROFILE", "STOKER_WORKERS",
                            "STOKER_PREFETCH", "STOKER_CPUS", "STOKER_MEM_BUDGET"}) {
      EXPECT_TRUE(env.count(key)) << key;
    }
    EXPECT_EQ(env.at("RANK"), std::to_string(rank));
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
    EXPECT_EQ(env.at("STOKER_PROFILE"), "balanced");
    EXPECT_EQ(env.at("MASTER_PORT"), p.begin()->second.at("MASTER_PORT"));
    EXPECT_GE(std::stoi(env.at("MASTER_PORT")), 20000);
    EXPECT_LT(std::stoi(env.at("MASTER_PORT")), 32768);
    // n1's NodeAddr in the harness's slurm.conf (its name does not resolve).
    EXPECT_EQ(env.at("MASTER_ADDR"), "127.0.0.1");
    nodes.insert(env.at("node"));
    local_ranks[env.at("node")].insert(env.at("LOCAL_RANK"));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
  for (const auto& [node, ranks] : local_ranks) {
    EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"})) << node;
  }
}

TEST_F(Task, CpuBindingAppliedInsideTheJobAndDisjoint) {
  const RunResult r = run("srun -N2 -n4 --stoker --stoker-bind=even " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out;
  std::map<std::string, std::vector<CpuSet>> per_node;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ": " + r.out);
    const CpuSet affinity = CpuSet::parse(env.at("affinity"));
    const CpuSet plan = CpuSet::parse(env.at("STOKER_CPUS"));
    // Slurm's masks for the step's local tasks: what the job holds on this node.
    CpuSet job;
    std::string list = env.at("SLURM_CPU_BIND_LIST");
    for (size_t pos = 0; pos <= list.size();) {
      size_t end = list.find(',', pos);
      if (end == std::string::npos) end = list.size();
      const unsigned long mask = std::stoul(list.substr(pos, end - pos), nullptr, 16);
      for (int b = 0; b < 64; ++b) {
        if (mask & (1ul << b)) job.set(b);
      }
      pos = end + 1;
    }
    EXPECT_FALSE(affinity.empty());
    EXPECT_EQ(affinity, plan) << "the task runs where its plan says";
    EXPECT_TRUE(affinity.is_subset_of(job)) << affinity.to_string() << " vs " << job.to_string();
    per_node[env.at("node")].push_back(affinity);
  }
  for (const auto& [node, masks] : per_node) {
    ASSERT_EQ(masks.size(), 2u) << node;
    EXPECT_FALSE(masks[0].intersects(masks[1])) << node << ": local ranks share CPUs";
  }
}

// `stoker plan --json` for the same inputs, read back as the Plan fields the
// environment carries.
nlohmann::json stoker_plan(const std::string& args) {
  const RunResult r = ClusterTest::run(std::string(STOKER_CLI) + " plan --json " + args);
  EXPECT_EQ(r.rc, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int i : v) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

// Fake GPUs (gres File=/dev/ttyN) and an admin topology XML of a 4-GPU node: the plan
// each rank exports equals `stoker plan` for the same inputs, and binding is skipped
// (the XML is not this machine).
TEST_F(Task, TopologyXmlPlanEqualsStokerPlan) {
  const fs::path xml = dir() / "four-gpu-node.xml";
  write_file(xml, four_gpu_two_socket(false));
  use_plugin(default_args() + " topology_xml=" + xml.string());
  const RunResult r =
      run("srun -N1 -n2 --gres=gpu:2 --stoker-profile=cv --stoker-verbose " + probe());
  ASSERT_EQ(r.rc, 0) << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 2u) << r.out << r.err;
  EXPECT_EQ(count_of(r.err, "binding: skipped: "), 2) << r.err;
  CpuSet step;
  for (const auto& [rank, env] : p) step = step | CpuSet::parse(env.at("affinity"));
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + "\n" + r.err);
    EXPECT_EQ(env.at("SLURM_STEP_GPUS"), "0,1");
    // The memory the plugin planned with, from its verbose line.
    const std::string tag = "stoker: rank " + std::to_string(rank) + " (";
    const size_t line = r.err.find(tag), mem = r.err.find(" mem=", line);
    ASSERT_NE(mem, std::string::npos);
    const std::string mem_bytes = r.err.substr(mem + 5, r.err.find(' ', mem + 5) - mem - 5);
    const auto got = read_plan([&](const std::string& k) -> std::optional<std::string> {
      auto it = env.find(k);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    ASSERT_TRUE(got.has_value());
    const nlohmann::json want =
        stoker_plan("--topology " + xml.string() + " --profiles " + profiles_file().string() +
                    " --profile cv --cpus " + step.to_string() + " --gpus 0,1 --local-rank " +
                    env.at("LOCAL_RANK") + " --local-size 2 --mem-limit " + mem_bytes);
    ASSERT_TRUE(want.is_object());
    EXPECT_EQ(got->profile, want["profile"]);
    EXPECT_EQ(got->local_rank, want["local_rank"]);
    EXPECT_EQ(got->local_size, want["local_size"]);
    EXPECT_EQ(got->cpus.to_string(), want["cpus"]);
    EXPECT_EQ(got->main_cpus.to_string(), want["main_cpus"]);
    EXPECT_EQ(got->worker_cpus.to_string(), want["worker_cpus"]);
    EXPECT_EQ(join(got->numa), join(want["numa"].get<std::vector<int>>()));
    EXPECT_EQ(got->workers, want["workers"]);
    EXPECT_EQ(got->prefetch, want["prefetch"]);
    EXPECT_EQ(got->mem_budget, want["mem_budget"]);
    EXPECT_EQ(got->batch_bytes, want["batch_bytes"]);
    EXPECT_EQ(got->pin_memory, want["pin_memory"]);
    EXPECT_EQ(got->gpu, want["gpu"]);
    EXPECT_EQ(got->nics, want["nics"].get<std::vector<std::string>>());
    EXPECT_EQ(to_string(got->bind), want["bind"]);
    EXPECT_EQ(to_string(got->mem_bind), want["mem_bind"]);
  }
  EXPECT_EQ(p.at(0).at("STOKER_GPU"), "0000:1a:00.0");
  EXPECT_EQ(p.at(1).at("STOKER_GPU"), "0000:3d:00.0");
}

#ifdef STOKER_PYTHON
// Runs tests/python/apply_probe.py as one task of 2 CPUs under the plugin (the plan applied
// by default: stoker.plan() pins the training loop's thread) and returns what it read back
// from the kernel inside the task.
nlohmann::json probe_threads(const std::string& flags, const std::string& args, RunResult* r) {
  const fs::path tokens = ClusterTest::jobs() / "apply-tokens.bin";
  write_file(tokens, std::string(2 * (64 * 16 + 1), '\0'));
  // No OMP_NUM_THREADS from this process: what the task has comes from the plugin.
  *r = ClusterTest::run("env -u OMP_NUM_THREADS srun -N1 -n1 -c2 --stoker --stoker-verbose " +
                        flags + " env PYTHONPATH=" STOKER_PYTHONPATH " " STOKER_PYTHON " " +
                        STOKER_SOURCE_DIR "/tests/python/apply_probe.py " + tokens.string() + " " +
                        args);
  EXPECT_EQ(r->rc, 0) << r->err;
  const auto lines = lines_of(r->out);
  return nlohmann::json::parse(lines.empty() ? "" : lines.back(), nullptr, false);
}

TEST_F(Task, MainAndWorkerThreadsLandOnThePlansCores) {
  RunResult r;
  // Two OpenMP threads however many main CPUs: the pool's extra thread must inherit the pin.
  const nlohmann::json out = probe_threads("", "--omp-threads 2", &r);
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  SCOPED_TRACE(out.dump() + "\n" + r.err);
  EXPECT_EQ(out["source"], "the STOKER_* environment");
  const CpuSet main = CpuSet::from_list(out["main_cpus"].get<std::vector<int>>());
  ASSERT_FALSE(main.empty());
  EXPECT_EQ(out["main_thread"], main.to_string()) << "the training loop's thread";
  EXPECT_EQ(out["workers"], out["worker_shares"]) << "the loader's workers";
  EXPECT_EQ(out["torch_threads"], main.count()) << "torch's intra-op threads";
  // OpenMP threads: torch's intra-op pool, started after the pin, inherits the main CPUs.
  EXPECT_FALSE(out["other_threads"].empty()) << "no OpenMP thread started";
  for (const auto& cpus : out["other_threads"]) EXPECT_EQ(cpus, main.to_string());
  // The plugin's OMP_NUM_THREADS export (its own test: Launch.ThreadCountsAreThePlansMainCores)
  // gives the same count; a value set outside the job is kept, so it is compared when exported.
  if (!out["omp_num_threads"].is_null()) {
    EXPECT_EQ(out["omp_num_threads"], std::to_string(main.count()));
  }
  EXPECT_EQ(count_of(r.err, "applied the plan: main thread pinned to CPUs " + main.to_string()), 1);
}

// The plugin binds the task's memory as --stoker-mem-bind says (read back in the task with
// get_mempolicy): local prefers the plan's node(s), strict binds them, none leaves them.
TEST_F(Task, MemoryBindingIsPreferredStrictOrNone) {
  const std::vector<std::pair<std::string, int>> modes = {
      {"", 1},
      {"--stoker-mem-bind=local", 1},
      {"--stoker-mem-bind=strict", 2},
      {"--stoker-mem-bind=none", 0}};  // MPOL_PREFERRED, MPOL_BIND, MPOL_DEFAULT
  for (const auto& [flag, mode] : modes) {
    RunResult r;
    const nlohmann::json out = probe_threads(flag, "--no-torch", &r);
    ASSERT_TRUE(out.is_object()) << flag << ": " << r.out << r.err;
    ASSERT_TRUE(out["mem_policy"].is_object()) << flag << ": " << out.dump();
    EXPECT_EQ(out["mem_policy"]["mode"], mode) << flag << ": " << out.dump();
    if (mode != 0) {
      EXPECT_EQ(out["mem_policy"]["nodes"], out["numa"]) << flag;
    }
  }
}
#endif

}  // namespace
}  // namespace stoker::test
