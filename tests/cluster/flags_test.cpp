// The flags reach srun/sbatch, and bad values are refused at submit time with the
// planner library's own one-line message; nothing is queued.
#include <string>
#include <vector>

#include "cluster_harness.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::test {
namespace {

class Flags : public ClusterTest {};

TEST_F(Flags, AppearInSrunAndSbatchHelp) {
  for (const char* tool : {"srun", "sbatch", "salloc"}) {
    const RunResult r = run(std::string(tool) + " --help");
    ASSERT_EQ(r.rc, 0) << tool << ": " << r.err;
    for (const UserFlag& f : kUserFlags) {
      // "--stoker-workers=auto|N", "--stoker=on|off"; a switch has no '='.
      const std::string flag = std::string("--") + f.name;
      const std::string shown = flag + (f.has_arg == 0 ? " " : "=");
      EXPECT_NE(r.out.find(shown), std::string::npos) << tool << " --help lacks " << flag << "\n"
                                                      << r.out;
    }
  }
}

// The line the plugin must print for `flag=value` (parse error or check error): the
// library's stoker::Error after "stoker: ", as the plugin's boundary logs it.
std::string expected_error(const std::string& flag, const std::string& value) {
  UserOptions opts;
  try {
    set_user_option(opts, flag, value);
    validate_user_options(opts, load_profiles(ClusterTest::profiles_file()));
  } catch (const Error& e) {
    return std::string("stoker: ") + e.what();
  }
  return "";
}

struct Rejection {
  const char* what;
  std::string flag, value;
};

const std::vector<Rejection> kRejections = {
    {"unknown profile", "--stoker-profile", "no-such-profile"},
    {"malformed number", "--stoker-workers", "abc"},
    {"over the admin's cap", "--stoker-prefetch", "100"},
};

void expect_rejected(const std::string& tool, const std::string& cmd_tail) {
  for (const auto& rej : kRejections) {
    const std::string line = expected_error(rej.flag, rej.value);
    ASSERT_FALSE(line.empty()) << rej.what << ": the library accepts " << rej.flag << "="
                               << rej.value;
    const int before = ClusterTest::job_count();
    const RunResult r = ClusterTest::run(tool + " " + rej.flag + "=" + rej.value + " " + cmd_tail);
    EXPECT_NE(r.rc, 0) << tool << " accepted " << rej.what;
    EXPECT_NE(r.err.find(tool + ": error: " + line + "\n"), std::string::npos)
        << rej.what << ": expected '" << line << "' in:\n"
        << r.err;
    EXPECT_EQ(count_of(r.err, "stoker: "), 1) << "one line only:\n" << r.err;
    EXPECT_EQ(ClusterTest::job_count(), before) << rej.what << ": a job was created";
    EXPECT_EQ(ClusterTest::run("squeue -h").out, "") << rej.what;
  }
}

TEST_F(Flags, SrunRejectsBadValuesAtSubmit) {
  expect_rejected("srun", "-N1 -n1 true");
}

TEST_F(Flags, SbatchRejectsBadValuesAtSubmit) {
  expect_rejected("sbatch", "-N1 -n1 -o /dev/null --wrap true");
}

TEST_F(Flags, SbatchRejectsBadScriptLines) {
  write_file(jobs() / "bad.sbatch",
             "#!/bin/sh\n#SBATCH -N1 -n1 -o /dev/null\n#SBATCH --stoker-workers=abc\ntrue\n");
  const int before = job_count();
  const RunResult r = run("sbatch bad.sbatch");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("sbatch: error: " + expected_error("--stoker-workers", "abc")),
            std::string::npos)
      << r.err;
  EXPECT_EQ(job_count(), before);
}

TEST_F(Flags, GoodValuesAreAccepted) {
  const RunResult r =
      run("srun -N1 -n1 --stoker-profile=cv --stoker-workers=1 "
          "--stoker-prefetch=auto --stoker-bind=even --stoker-mem-bind=none "
          "--stoker-pin-memory=no true");
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
}  // namespace stoker::test
