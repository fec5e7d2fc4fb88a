// Open files, /dev/shm, memory and CPU-quota findings: the rules on given values, and the
// real conditions (a lowered nofile limit, a small tmpfs) read back from the system.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "doctor_fixture.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {
namespace {

using test::DoctorDir;
using test::NofileGuard;
constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;

TEST(OpenFiles, EnoughIsOkAndStatesTheAssumption) {
  Finding f = check_open_files(1024, 4096, 8);
  EXPECT_EQ(f.check, "nofile");
  EXPECT_EQ(f.severity, Severity::Ok);
  // 8 x 16 + 64 = 192 needed, and the finding says what it assumed.
  EXPECT_NE(f.message.find("192"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("8 workers x 16 files"), std::string::npos) << f.message;
  EXPECT_EQ(check_open_files(RLIM_INFINITY, RLIM_INFINITY, 1000).severity, Severity::Ok);
}

TEST(OpenFiles, BelowNeedIsAnErrorWithTheRightFix) {
  Finding raise = check_open_files(64, 4096, 8);
  EXPECT_EQ(raise.severity, Severity::Error);
  EXPECT_NE(raise.fix.find("ulimit -n 4096"), std::string::npos) << raise.fix;
  // The hard limit is too low as well: only the admin can help.
  Finding admin = check_open_files(64, 100, 8);
  EXPECT_EQ(admin.severity, Severity::Error);
  EXPECT_NE(admin.fix.find("admin"), std::string::npos) << admin.fix;
  // The boundary: exactly the need is enough.
  EXPECT_EQ(check_open_files(2 * 16 + kProcessFiles, 4096, 2).severity, Severity::Ok);
  EXPECT_EQ(check_open_files(2 * 16 + kProcessFiles - 1, 4096, 2).severity, Severity::Error);
}

TEST(OpenFiles, RealUlimit64IsFoundByTheDoctor) {
  NofileGuard guard(64);
  ASSERT_TRUE(guard.ok()) << "setrlimit(RLIMIT_NOFILE, 64) failed";
  Report r = run_doctor({});
  const Finding* nofile = nullptr;
  for (const Finding& f : r.findings)
    if (f.check == "nofile") nofile = &f;
  ASSERT_NE(nofile, nullptr);
  EXPECT_EQ(nofile->severity, Severity::Error) << nofile->message;
  EXPECT_NE(nofile->message.find("is 64,"), std::string::npos) << nofile->message;
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(Shm, RulesOnSizes) {
  EXPECT_EQ(check_shm("/dev/shm", FsSpace{8 * kGiB, 8 * kGiB}, 256 * kMiB).severity, Severity::Ok);
  // Under 1 GiB whatever the budget.
  EXPECT_EQ(check_shm("/dev/shm", FsSpace{64 * kMiB, 64 * kMiB}, kMiB).severity, Severity::Warn);
  // Under twice the budget.
  Finding f = check_shm("/dev/shm", FsSpace{4 * kGiB, 4 * kGiB}, 3 * kGiB);
  EXPECT_EQ(f.severity, Severity::Warn);
  EXPECT_NE(f.fix.find("6 GiB"), std::string::npos) << f.fix;
  Finding missing = check_shm("/nonexistent/shm", std::nullopt, kMiB);
  EXPECT_EQ(missing.severity, Severity::Warn);
  EXPECT_NE(missing.message.find("missing"), std::string::npos);
}

TEST(Shm, RealSmallTmpfsIsFound) {
  DoctorDir dir;
  const std::string mnt = dir.file("shm");
  std::filesystem::create_directories(mnt);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=16m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
  std::optional<FsSpace> space = filesystem_space(mnt);
  Finding f = check_shm(mnt, space, 64 * kMiB);
  umount2(mnt.c_str(), MNT_DETACH);
  ASSERT_TRUE(space.has_value());
  EXPECT_EQ(space->size, 16 * kMiB);
  EXPECT_EQ(f.severity, Severity::Warn);
  EXPECT_NE(f.message.find("16 MiB"), std::string::npos) << f.message;
  EXPECT_FALSE(filesystem_space(dir.file("no-such-dir")).has_value());
}

TEST(Memory, BudgetsAgainstTheLimit) {
  EXPECT_EQ(check_memory(64 * kGiB, 4 * kGiB, 4).severity, Severity::Ok);
  EXPECT_EQ(check_memory(64 * kGiB, 10 * kGiB, 4).severity, Severity::Warn);  // 40 of 64
  Finding oom = check_memory(16 * kGiB, 5 * kGiB, 4);                         // 20 of 16
  EXPECT_EQ(oom.severity, Severity::Error);
  EXPECT_NE(oom.message.find("20 GiB"), std::string::npos) << oom.message;
  EXPECT_FALSE(oom.fix.empty());
  EXPECT_EQ(check_memory(0, kGiB, 1).severity, Severity::Info);
  // The real limit of this process against a budget far beyond it.
  uint64_t limit = memory_limit_bytes();
  EXPECT_EQ(check_memory(limit, limit, 2).severity, Severity::Error);
}

TEST(CpuQuota, QuotaBelowTheMaskThrottles) {
  EXPECT_EQ(check_cpu_quota(std::nullopt, 8).severity, Severity::Ok);
  EXPECT_EQ(check_cpu_quota(8.0, 8).severity, Severity::Ok);
  Finding f = check_cpu_quota(2.5, 8);
  EXPECT_EQ(f.severity, Severity::Warn);
  EXPECT_NE(f.message.find("2.50"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("--stoker-workers=1"), std::string::npos) << f.fix;
}

}  // namespace
}  // namespace stoker::doctor
