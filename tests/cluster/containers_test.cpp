// stoker beside NVIDIA pyxis + enroot (scripts/containers.sh): a tuned step runs in a
// container image that holds python3 and numpy and nothing of stoker; inside it, each rank
// runs where its plan says and sees the plan's STOKER_* variables. With the wheel's contents
// mounted (ContainersWithTheWheel): stoker.plan() is the plugin's, a Loader trains over a
// mounted dataset, the run records reach the job log (or the line names the missing mount),
// the Prometheus files reach the host, and an image's own STOKER_WORKERS / OMP_NUM_THREADS
// (scripts/containers.sh image-env) do not replace the plan. Skips (with the reason) where
// pyxis, enroot or the image is missing: `scripts/containers.sh install` and `image`; the
// wheel tests also where package.wheel (fixture stoker_wheel) left no wheel.
#include <chrono>
#include <cstdio>
#include <set>
#include <string>

#include "cluster_harness.hpp"
#include "stoker/common/cpuset.hpp"
#include "stoker/record/run_record.hpp"
#include "wheel_share.hpp"

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
  // Runs `cmd` and says how long it took (each containerized step: ~4.5 s with squashfuse).
  static RunResult timed(const std::string& what, const std::string& cmd) {
    const auto start = std::chrono::steady_clock::now();
    RunResult r = run(cmd);
    std::printf("%s took %.1f s\n", what.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return r;
  }
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
    // run record folder, named by job and step, and the seal's step ("@step=JOB.STEP;"):
    // another job here.
    const auto& host_env = on_host.at(rank);
    const auto without_step = [](const std::string& seal) {
      return seal.substr(seal.find(';') + 1);
    };
    for (const auto& [name, value] : host_env) {
      if (name.rfind("STOKER_", 0) != 0) continue;
      ASSERT_TRUE(env.count(name)) << name << " did not reach the container";
      if (name == "STOKER_PLAN_SEAL") {
        EXPECT_EQ(without_step(env.at(name)), without_step(value)) << name;
      } else if (name != "STOKER_RUN_RECORD_DIR" && name != "STOKER_EXPORTED") {
        EXPECT_EQ(env.at(name), value) << name;
      }
    }
    nodes.insert(env.at("node"));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
}

// The wheel's contents mounted read-only at /opt/stoker in the container, with
// PYTHONPATH=/opt/stoker/site (wheel_share.hpp); the dataset, the probe and node-exporter's
// textfile folder are host folders under the cluster's jobs folder, mounted too.
class ContainersWithTheWheel : public Containers {
 protected:
  void SetUp() override {
    Containers::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const WheelShare w = prepare_wheel_share(share());
    if (w.no_wheel) {
      GTEST_SKIP() << "no wheel in " STOKER_PACKAGE_DIR " (ctest's package.wheel makes it)";
    }
    ASSERT_EQ(w.problem, "");
    fs::create_directories(share() / "prom");
    const RunResult tokens =
        run("head -c 260000 /dev/urandom > " + (share() / "tokens.bin").string());
    ASSERT_EQ(tokens.rc, 0) << tokens.err;
    // The record root as the plugin makes it (root's, 0755), there before pyxis checks the
    // mount's source.
    fs::remove_all(record_root());
    fs::remove(job_log());
    fs::create_directories(record_root());
    fs::permissions(record_root(), fs::perms(0755));
    use_plugin(default_args() + " job_log=" + job_log().string() +
               " record_root=" + record_root().string());
  }
  void TearDown() override {
    fs::remove(dir() / "plugstack.conf.d" / "zz-pyxis.conf");
    Containers::TearDown();
  }
  static fs::path share() { return jobs() / "container-share"; }
  static fs::path record_root() { return dir() / "records"; }
  static fs::path job_log() { return dir() / "jobs.jsonl"; }
  // srun of the probe in `image` on 2 nodes, 4 ranks, profile cv, with the wheel and the
  // share mounted and `mounts` besides; `loader`: the probe trains over the mounted tokens.
  std::string probe_step(const std::string& image, const std::string& mounts, bool loader) const {
    return "PYTHONPATH=/opt/stoker/site STOKER_METRICS=/node-exporter/stoker-{job}-{rank}.prom"
           " srun -N2 -n4 --stoker --stoker-profile=cv --container-image=" +
           image + " --container-mounts=" + (share() / "stoker").string() + ":/opt/stoker:ro," +
           share().string() + ":/share," + (share() / "prom").string() + ":/node-exporter" +
           (mounts.empty() ? "" : "," + mounts) + " python3 /share/probe.py" +
           (loader ? " /share/tokens.bin" : "");
  }
  // The same step's STOKER_* and OMP_NUM_THREADS on the host (no container): the plan
  // the plugin makes for each rank.
  static Probe host_plan() {
    const RunResult host = run("srun -N2 -n4 --stoker --stoker-profile=cv " + probe());
    EXPECT_EQ(host.rc, 0) << host.err;
    Probe p = parse_probe(host.out);
    EXPECT_EQ(p.size(), 4u) << host.out;
    return p;
  }
  // The probe step in the image whose environment sets STOKER_WORKERS=64 and
  // OMP_NUM_THREADS=7 (scripts/containers.sh image-env); `ranks`: what each rank printed.
  RunResult env_image_step(const std::string& what, Probe* ranks) const {
    const std::string env_image = run(script() + " image-env").out;
    EXPECT_FALSE(env_image.empty());
    const std::string image = env_image.substr(0, env_image.size() - 1);
    std::string step = probe_step(image, "", false);
    step.insert(step.find("--stoker-profile=cv"), "--stoker-verbose ");
    const RunResult r = timed(what, step);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    *ranks = parse_probe(r.out);
    EXPECT_EQ(ranks->size(), 4u) << r.out << r.err;
    return r;
  }
  // The job log's lines of `job`.
  static std::vector<JobLogLine> log_lines(const std::string& job) {
    std::vector<JobLogLine> out;
    for (const std::string& text : lines_of(slurp(job_log()))) {
      JobLogLine l = parse_job_log_line(text, job_log().string());
      if (l.job == job) out.push_back(std::move(l));
    }
    return out;
  }
};

TEST_F(ContainersWithTheWheel, ThePluginsPlanALoaderRecordsAndMetricsWorkInsideTheImage) {
  const Probe host = host_plan();
  ASSERT_EQ(host.size(), 4u);
  // The record root mounted at its own path: STOKER_RUN_RECORD_DIR names a folder in it.
  const RunResult r =
      timed("the containerized step with a loader",
            probe_step(image_, record_root().string() + ":" + record_root().string(), true));
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out << r.err;
  std::set<std::string> nodes;
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    // 1. stoker.plan() is the plugin's plan: read from the STOKER_* environment, each of its
    //    fields the value the task got, and the values the same step has on the host.
    EXPECT_EQ(env.at("source"), "the STOKER_* environment");
    EXPECT_EQ(env.at("reasons.source").find("changed after the plugin planned"), std::string::npos);
    int fields = 0;
    for (const auto& [key, value] : env) {
      if (key.rfind("plan.", 0) != 0) continue;
      const std::string name = key.substr(5);
      ++fields;
      ASSERT_TRUE(env.count(name)) << name << " is in the plan, not in the task's environment";
      EXPECT_EQ(value, env.at(name)) << name;
      if (name != "STOKER_MEM_BUDGET") {  // the node's free memory, read at each launch
        EXPECT_EQ(value, host.at(rank).at(name)) << name << ": not the host's plan";
      }
    }
    EXPECT_GE(fields, 15) << "stoker.plan().to_env() is short";
    EXPECT_EQ(CpuSet::parse(env.at("affinity")), CpuSet::parse(env.at("STOKER_CPUS")));
    // 2. A Loader over the mounted token file yielded its batches.
    EXPECT_EQ(env.at("batches"), "5");
    nodes.insert(env.at("node"));
    std::printf("rank %d: import stoker %s s\n", rank, env.at("import_s").c_str());
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
  // 3. The run records reached the job log: one "ok" line per rank, 0 missing. (The host
  // step before made no loader: its 4 "missing" lines are another job's.)
  const std::string job = p.begin()->second.at("job");
  const std::vector<JobLogLine> lines = log_lines(job);
  ASSERT_EQ(lines.size(), 4u) << slurp(job_log()) << r.err;
  std::set<uint64_t> ranks;
  for (const JobLogLine& l : lines) {
    SCOPED_TRACE(to_json(l));
    EXPECT_EQ(l.status, "ok");
    ASSERT_TRUE(l.record);
    EXPECT_EQ(l.record->plan.profile, "cv");
    EXPECT_EQ(l.record->batches, 5u);
    ranks.insert(l.rank);
  }
  EXPECT_EQ(ranks, (std::set<uint64_t>{0, 1, 2, 3}));
  // 5. Each rank's Prometheus textfile reached the host's collector folder.
  for (const auto& [rank, env] : p) {
    const fs::path prom =
        share() / "prom" / ("stoker-" + job + "-" + std::to_string(rank) + ".prom");
    const std::string text = slurp(prom);
    EXPECT_NE(text.find("stoker_batches_total{jobid=\"" + job + "\",job_id=\"" + job +
                        "\",step_id=\"0\",rank=\"" + std::to_string(rank) + "\",node=\"" +
                        env.at("node") + "\"} 5"),
              std::string::npos)
        << prom << ":\n"
        << text;
  }
}

// 4. Without the record root mounted, the rank cannot write its record (a fresh path inside);
// the job log's line says so and names the mount, not "made no stoker loader".
TEST_F(ContainersWithTheWheel, WithoutTheRecordFolderTheJobLogNamesTheMissingMount) {
  const RunResult r =
      timed("the containerized step without the record folder", probe_step(image_, "", true));
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const Probe p = parse_probe(r.out);
  ASSERT_EQ(p.size(), 4u) << r.out << r.err;
  for (const auto& [rank, env] : p) EXPECT_EQ(env.at("batches"), "5") << "rank " << rank;
  EXPECT_EQ(count_of(r.err, "cannot write the run record"), 4) << r.err;
  const std::vector<JobLogLine> lines = log_lines(p.begin()->second.at("job"));
  ASSERT_EQ(lines.size(), 4u) << slurp(job_log());
  for (const JobLogLine& l : lines) {
    const std::string text = to_json(l);
    EXPECT_EQ(l.status, "missing") << text;
    EXPECT_NE(l.problem.find(": no record (the rank ran in a container (--container-image) "
                             "without the record folder: mount it at its own path, "
                             "--container-mounts=" +
                             record_root().string()),
              std::string::npos)
        << text;
    EXPECT_EQ(l.problem.find("the rank made no stoker loader"), std::string::npos) << text;
  }
}

// 6. An image whose own environment sets STOKER_WORKERS=64 and OMP_NUM_THREADS=7
// (scripts/containers.sh image-env: its /etc/environment, which enroot applies and pyxis copies
// into the task). In the test cluster's plugstack order, pyxis's line first (pyxis.conf sorts
// before stoker.conf): pyxis's task_init sets the image's variables, then the plugin's. The
// plugin judges "the user's" against the step's environment as its user_init saw it (before
// any task_init), so the image's 7 is not taken as the job's own: the plan's 1 replaces it, and
// one line per node names both. The step's cgroup cpuset, out of view inside the container's
// namespaces, is the one slurmstepd read at user_init: the plan is checked against the cgroup
// inside whenever it is on the host (the --stoker-verbose lines say so).
TEST_F(ContainersWithTheWheel, AnImagesStokerWorkersAndThreadCountAreNamedAndReplacedPyxisFirst) {
  const Probe host = host_plan();
  ASSERT_EQ(host.size(), 4u);
  const RunResult on_host = run("srun -N2 -n4 --stoker --stoker-profile=cv --stoker-verbose true");
  ASSERT_EQ(on_host.rc, 0) << on_host.err;
  Probe p;
  const RunResult r = env_image_step("the step in the image with STOKER_WORKERS=64", &p);
  ASSERT_FALSE(HasFailure());
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    EXPECT_EQ(env.at("workers"), host.at(rank).at("STOKER_WORKERS")) << "the plan was replaced";
    EXPECT_EQ(env.at("STOKER_WORKERS"), host.at(rank).at("STOKER_WORKERS"));
    EXPECT_EQ(host.at(rank).at("OMP_NUM_THREADS"), "1");
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "1") << "the image's 7 stood";
    EXPECT_NE(env.at("STOKER_EXPORTED").find("OMP_NUM_THREADS=1"), std::string::npos);
    EXPECT_EQ(env.at("source"), "the STOKER_* environment");
  }
  EXPECT_EQ(count_of(r.err,
                     "set before the plugin planned (by a container image's environment or "
                     "another plugin), replaced by the plan's: STOKER_WORKERS=64, "
                     "OMP_NUM_THREADS=7"),
            2)  // once per node
      << r.err;
  EXPECT_EQ(r.err.find("changed after the plugin planned"), std::string::npos) << r.err;
  const std::string within = "within the cgroup cpuset";
  EXPECT_EQ(count_of(r.err, within), count_of(on_host.err, within)) << on_host.err << r.err;
  if (count_of(on_host.err, within) == 4) {
    EXPECT_EQ(count_of(r.err, "as slurmstepd saw it before the container's namespaces"), 4)
        << r.err;
  }
}

// The other order (a site whose plugstack lists stoker before pyxis): the image's
// STOKER_WORKERS=64 reaches the task; the runtime reads the plan from STOKER_PLAN_SEAL, names
// the variable on one stderr line and in the plan's "source" reason, and the plan stands.
TEST_F(ContainersWithTheWheel, AnImagesStokerWorkersIsNamedAndIgnoredWithStokerFirst) {
  const Probe host = host_plan();
  ASSERT_EQ(host.size(), 4u);
  fs::rename(dir() / "plugstack.conf.d" / "pyxis.conf",
             dir() / "plugstack.conf.d" / "zz-pyxis.conf");
  Probe p;
  const RunResult r =
      env_image_step("the step in the image with STOKER_WORKERS=64, stoker first", &p);
  ASSERT_FALSE(HasFailure());
  for (const auto& [rank, env] : p) {
    SCOPED_TRACE("rank " + std::to_string(rank) + ":\n" + r.out + r.err);
    const std::string planned = host.at(rank).at("STOKER_WORKERS");
    EXPECT_EQ(env.at("STOKER_WORKERS"), "64") << "the image's value did not arrive";
    EXPECT_EQ(env.at("workers"), planned) << "the plan was replaced";
    EXPECT_NE(env.at("reasons.source").find("changed after the plugin planned"), std::string::npos);
    EXPECT_NE(env.at("reasons.source").find("STOKER_WORKERS=64 (the plugin's " + planned + ")"),
              std::string::npos);
    EXPECT_EQ(env.at("OMP_NUM_THREADS"), "7");  // the image's, named (STOKER_EXPORTED says 1)
    EXPECT_NE(env.at("reasons.source").find("OMP_NUM_THREADS=7 (the plugin's 1)"),
              std::string::npos);
  }
  EXPECT_EQ(count_of(r.err,
                     "stoker: changed after the plugin planned (by a container image's "
                     "environment or a wrapper), not used: STOKER_WORKERS=64"),
            4)
      << r.err;
}

}  // namespace
}  // namespace stoker::test
