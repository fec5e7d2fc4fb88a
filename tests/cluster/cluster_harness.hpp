// Helpers for the cluster tests: run commands against the local cluster that
// scripts/local-cluster.sh started (ctest fixture cluster.start), switch the
// plugin's plugstack arguments, and parse what tasks printed (probe.sh).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace stoker::test {

namespace fs = std::filesystem;

struct RunResult {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

inline int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

// rank -> (KEY -> VALUE) from probe.sh lines "<rank> KEY=VALUE".
using Probe = std::map<int, std::map<std::string, std::string>>;
inline Probe parse_probe(const std::string& out) {
  Probe p;
  for (const auto& line : lines_of(out)) {
    const auto sp = line.find(' '), eq = line.find('=');
    if (sp == std::string::npos || eq == std::string::npos || eq < sp) continue;
    const std::string rank = line.substr(0, sp);
    if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos) continue;
    p[std::stoi(rank)][line.substr(sp + 1, eq - sp - 1)] = line.substr(eq + 1);
  }
  return p;
}

class ClusterTest : public ::testing::Test {
 public:
  static fs::path dir() { return STOKER_CLUSTER_DIR; }
  static fs::path jobs() { return dir() / "jobs"; }  // outside /tmp: n2 has a private /tmp
  static std::string probe() { return STOKER_SOURCE_DIR "/tests/cluster/probe.sh"; }

  // Runs `cmd` with bash in jobs(), against this cluster; stdout and stderr apart.
  static RunResult run(const std::string& cmd) {
    const fs::path err = jobs() / ("stderr." + std::to_string(getpid()));
    const std::string full =
        "cd '" + jobs().string() + "' && { " + cmd + " ; } 2>'" + err.string() + "'";
    RunResult r;
    FILE* f = popen(("bash -c " + quote(full)).c_str(), "r");
    if (!f) return r;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) r.out.append(buf, n);
    const int status = pclose(f);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = slurp(err);
    fs::remove(err);
    return r;
  }

  // Rewrites the cluster's plugstack line for the plugin (re-read at each launch).
  static void use_plugin(const std::string& args) {
    write_file(dir() / "plugstack.conf.d" / "stoker.conf",
               "optional " STOKER_SPANK_PLUGIN " " + args + "\n");
  }
  static void no_plugin() { fs::remove(dir() / "plugstack.conf.d" / "stoker.conf"); }

  // The admin's profiles file the tests use: a custom profile and tight caps.
  static fs::path profiles_file() {
    const fs::path p = dir() / "stoker-profiles.conf";
    write_file(p,
               "# cluster test profiles\n"
               "Defaults DefaultProfile=balanced MaxPrefetch=32 MaxWorkerFraction=0.9\n"
               "Profile=cv WorkerFraction=0.8 PrefetchPerWorker=2 MemShare=0.25 PinMemory=yes\n");
    return p;
  }
  static std::string default_args() {
    return "profiles=" + profiles_file().string() + " enable=opt-in";
  }

  // Jobs slurmctld knows about (completed ones stay for MinJobAge).
  static int job_count() {
    const RunResult r = run("scontrol -o show jobs 2>/dev/null | grep -c '^JobId=' || true");
    return std::atoi(r.out.c_str());
  }

 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the local Slurm cluster needs root";
    if (fs::exists(dir() / "skip-reason")) GTEST_SKIP() << slurp(dir() / "skip-reason");
    ASSERT_TRUE(fs::exists(dir() / "slurm.conf"))
        << "no cluster in " << dir() << ": the ctest fixture cluster.start did not run";
    setenv("SLURM_CONF", (dir() / "slurm.conf").c_str(), 1);
    use_mpi_loopback();
    fs::create_directories(jobs());
    // A job an earlier test left behind (its srun killed by a timeout) would hold the
    // nodes and make this test queue until it times out too.
    const RunResult clear =
        run(STOKER_SOURCE_DIR "/scripts/local-cluster.sh clear '" + dir().string() + "' 2>&1");
    ASSERT_EQ(clear.rc, 0) << clear.out;
    use_plugin(default_args());
  }
  // Leave the plugstack line as cluster.start wrote it (the plugin, no arguments), so
  // what runs next on the cluster does not inherit this test's settings.
  void TearDown() override {
    if (fs::exists(dir() / "plugstack.conf.d")) use_plugin("");
  }

 private:
  // Open MPI over the loopback only, from the one list every MPI test reads.
  static void use_mpi_loopback() {
    std::istringstream lines(slurp(STOKER_SOURCE_DIR "/scripts/mpi-loopback.env"));
    for (std::string line; std::getline(lines, line);) {
      const size_t eq = line.find('=');
      if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
      setenv(line.substr(0, eq).c_str(), line.substr(eq + 1).c_str(), 1);
    }
  }
  static std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }
};

}  // namespace stoker::test
