// The report: counts, exit code, text and JSON; and the `stoker doctor` command itself run
// the way the admin guide shows it ("Troubleshooting") (when the stoker binary is built).
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "doctor_fixture.hpp"
#include "enum_names_check.hpp"
#include "run_command.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {
namespace {

Report sample_report() {
  return {{{"nofile", Severity::Ok, "fine", ""},
           {"shm", Severity::Warn, "small \"shm\"", "enlarge it"},
           {"memory", Severity::Error, "too much", "prefetch less"},
           {"smt", Severity::Info, "siblings", ""}}};
}

TEST(Report, CountsAndExitCode) {
  Report r = sample_report();
  EXPECT_EQ(r.count(Severity::Ok), 1);
  EXPECT_EQ(r.count(Severity::Warn), 1);
  EXPECT_EQ(r.count(Severity::Error), 1);
  EXPECT_EQ(r.exit_code(), 1);
  r.findings.erase(r.findings.begin() + 2);
  EXPECT_EQ(r.exit_code(), 0);  // warnings alone do not fail
}

TEST(Report, TextHasOneLinePerFindingAndItsFix) {
  std::string t = sample_report().text();
  EXPECT_NE(t.find("warn   shm        small \"shm\"\n"), std::string::npos) << t;
  EXPECT_NE(t.find("fix: enlarge it\n"), std::string::npos) << t;
  EXPECT_NE(t.find("4 checks: 1 ok, 1 info, 1 warn, 1 error"), std::string::npos) << t;
}

TEST(Report, JsonHasFindingsAndSummary) {
  auto j = nlohmann::json::parse(sample_report().json());
  ASSERT_EQ(j["findings"].size(), 4u);
  EXPECT_EQ(j["findings"][1]["check"], "shm");
  EXPECT_EQ(j["findings"][1]["severity"], "warn");
  EXPECT_EQ(j["findings"][1]["message"], "small \"shm\"");
  EXPECT_EQ(j["findings"][1]["fix"], "enlarge it");
  EXPECT_EQ(j["summary"]["error"], 1);
  EXPECT_EQ(j["summary"]["info"], 1);
  EXPECT_EQ(j["summary"]["exit_code"], 1);
}

const std::string kStoker = stoker::test::stoker_cli();

TEST(DoctorCommand, JsonOnThisMachine) {
  if (access(kStoker.c_str(), X_OK) != 0) GTEST_SKIP() << kStoker << " is not built";
  stoker::test::CommandResult r = stoker::test::run_command(kStoker + " doctor --json --dataset " +
                                                            STOKER_SOURCE_DIR + " 2>&1");
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(r.status, j["summary"]["exit_code"]) << r.out;
  std::set<std::string> checks;
  for (const auto& f : j["findings"]) {
    checks.insert(f["check"].get<std::string>());
    EXPECT_TRUE(f.contains("severity") && f.contains("message") && f.contains("fix"));
  }
  for (const char* c : {"plan", "nofile", "shm", "cpu_quota", "memory", "storage", "smt", "gpu"})
    EXPECT_TRUE(checks.count(c)) << "no " << c << " finding in " << r.out;
}

TEST(DoctorCommand, Ulimit64FailsWithTheFix) {
  if (access(kStoker.c_str(), X_OK) != 0) GTEST_SKIP() << kStoker << " is not built";
  // The soft limit alone: the user can raise it again.
  stoker::test::CommandResult soft =
      stoker::test::run_command("ulimit -Sn 64 && " + kStoker + " doctor 2>&1");
  EXPECT_EQ(soft.status, 1) << soft.out;
  EXPECT_NE(soft.out.find("error  nofile"), std::string::npos) << soft.out;
  EXPECT_NE(soft.out.find("fix: raise it in the job script: ulimit -n"), std::string::npos)
      << soft.out;
  // `ulimit -n 64` lowers the hard limit too: only the admin can help.
  stoker::test::CommandResult both =
      stoker::test::run_command("ulimit -n 64 && " + kStoker + " doctor 2>&1");
  EXPECT_EQ(both.status, 1) << both.out;
  EXPECT_NE(both.out.find("the hard limit 64 is too low as well"), std::string::npos) << both.out;
}

TEST(DoctorCommand, PythonFlag) {
  if (access(kStoker.c_str(), X_OK) != 0) GTEST_SKIP() << kStoker << " is not built";
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3 is missing";
  stoker::test::CommandResult r =
      stoker::test::run_command("PYTHONPATH= " + kStoker + " doctor --python --json 2>&1");
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["findings"].back()["check"], "python") << r.out;
}

TEST(Severity, NamesReadBothWays) {
  expect_names_round_trip(
      kSeverityNames, [](Severity s) { return to_string(s); },
      [](std::string_view s) { return value_named(kSeverityNames, s); });
}

}  // namespace
}  // namespace stoker::doctor
