// The cgroup CPU quota: crafted cgroup v2 and v1 trees (nesting, namespaces, no limit), and
// a real cgroup with a quota that a forked child joins.
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "doctor_fixture.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {
namespace {

using test::DoctorDir;

constexpr const char* kMountsV2 =
    "24 1 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
constexpr const char* kMountsV1 =
    "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw shared:12 - cgroup cgroup rw,cpu,cpuacct\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw shared:13 - cgroup cgroup rw,memory\n";

TEST(CgroupQuota, V2SmallestOverAncestors) {
  DoctorDir root;
  root.write("proc/self/cgroup", "0::/slurm/job_7/step_0\n");
  root.write("proc/self/mountinfo", kMountsV2);
  root.write("sys/fs/cgroup/slurm/cpu.max", "max 100000\n");
  root.write("sys/fs/cgroup/slurm/job_7/cpu.max", "150000 100000\n");
  root.write("sys/fs/cgroup/slurm/job_7/step_0/cpu.max", "400000 100000\n");
  std::optional<double> q = cgroup_cpu_quota(root.path());
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 1.5);
}

TEST(CgroupQuota, V2NoLimitAnywhere) {
  DoctorDir root;
  root.write("proc/self/cgroup", "0::/user.slice\n");
  root.write("proc/self/mountinfo", kMountsV2);
  root.write("sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
  EXPECT_FALSE(cgroup_cpu_quota(root.path()).has_value());
}

TEST(CgroupQuota, V1QuotaOverPeriod) {
  DoctorDir root;
  root.write("proc/self/cgroup", "5:cpu,cpuacct:/slurm/uid_0/job_3\n4:memory:/slurm\n0::/\n");
  root.write("proc/self/mountinfo", kMountsV1);
  const std::string job = "sys/fs/cgroup/cpu,cpuacct/slurm/uid_0/job_3/";
  root.write(job + "cpu.cfs_quota_us", "250000\n");
  root.write(job + "cpu.cfs_period_us", "100000\n");
  root.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  root.write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  std::optional<double> q = cgroup_cpu_quota(root.path());
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 2.5);
}

TEST(CgroupQuota, NamespacedMountRootIsStripped) {
  // Inside a container the hierarchy mounted is /docker/abc, and /proc/self/cgroup names
  // paths below it in full.
  DoctorDir root;
  root.write("proc/self/cgroup", "0::/docker/abc/train\n");
  root.write("proc/self/mountinfo",
             "40 30 0:30 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
  root.write("sys/fs/cgroup/train/cpu.max", "50000 100000\n");
  std::optional<double> q = cgroup_cpu_quota(root.path());
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(*q, 0.5);
}

TEST(CgroupQuota, GarbledFilesAreNoQuota) {
  DoctorDir root;
  root.write("proc/self/cgroup", "0::/a\n");
  root.write("proc/self/mountinfo", kMountsV2);
  root.write("sys/fs/cgroup/a/cpu.max", "lots 100000\n");
  EXPECT_FALSE(cgroup_cpu_quota(root.path()).has_value());
  EXPECT_FALSE(cgroup_cpu_quota(root.file("empty-root")).has_value());
}

// A cgroup with a 0.5-CPU quota made for real, where this machine lets us: cgroup v2 with
// the cpu controller at /sys/fs/cgroup, else v1's cpu hierarchy.
struct RealCgroup {
  std::string dir, procs, error;
};

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

RealCgroup make_real_cgroup() {
  namespace fs = std::filesystem;
  const std::string name = "stoker_doctor_test_" + std::to_string(getpid());
  std::ifstream controllers("/sys/fs/cgroup/cgroup.controllers");
  std::string list;
  std::getline(controllers, list);
  if (list.find("cpu") != std::string::npos) {
    write_text("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
    RealCgroup c{"/sys/fs/cgroup/" + name, "", ""};
    std::error_code ec;
    fs::create_directory(c.dir, ec);
    if (ec || !write_text(c.dir + "/cpu.max", "50000 100000"))
      return {"", "", "cgroup v2 at /sys/fs/cgroup is not writable"};
    c.procs = c.dir + "/cgroup.procs";
    return c;
  }
  for (const char* v1 : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    if (!fs::exists(std::string(v1) + "/cpu.cfs_quota_us")) continue;
    RealCgroup c{std::string(v1) + "/" + name, "", ""};
    std::error_code ec;
    fs::create_directory(c.dir, ec);
    if (ec || !write_text(c.dir + "/cpu.cfs_period_us", "100000") ||
        !write_text(c.dir + "/cpu.cfs_quota_us", "50000"))
      return {"", "", std::string(v1) + " is not writable"};
    c.procs = c.dir + "/cgroup.procs";
    return c;
  }
  return {"", "", "no cgroup hierarchy with the cpu controller"};
}

TEST(CgroupQuota, RealCgroupJoinedByAChild) {
  RealCgroup cg = make_real_cgroup();
  if (cg.dir.empty()) GTEST_SKIP() << cg.error;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    double q = -1;  // -1: could not join, -2: no quota seen
    if (write_text(cg.procs, std::to_string(getpid()))) {
      std::optional<double> quota = cgroup_cpu_quota("/");
      q = quota ? *quota : -2;
    }
    ssize_t n = write(fds[1], &q, sizeof q);
    _exit(n == sizeof q ? 0 : 1);
  }
  close(fds[1]);
  double q = 0;
  ssize_t n = read(fds[0], &q, sizeof q);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::filesystem::remove(cg.dir);  // empty again once the child is gone
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof q));
  if (q == -1) GTEST_SKIP() << "the child could not join " << cg.dir;
  EXPECT_DOUBLE_EQ(q, 0.5);
  Finding f = check_cpu_quota(q, 2);
  EXPECT_EQ(f.severity, Severity::Warn) << f.message;
}

}  // namespace
}  // namespace stoker::doctor
