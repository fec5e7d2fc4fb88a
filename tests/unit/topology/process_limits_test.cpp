// current_cpu_mask and memory_limit_bytes against this machine and fake cgroup trees.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include "stoker/topology/topology.hpp"
#include "temp_tree.hpp"

namespace stoker {
namespace {

uint64_t physical() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(CpuMask, MatchesSchedGetaffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  CpuSet mask = current_cpu_mask();
  EXPECT_EQ(mask.count(), CPU_COUNT(&set));
  for (int c : mask.list()) EXPECT_TRUE(CPU_ISSET(c, &set)) << c;
}

TEST(MemoryLimit, CgroupV2TakesTheSmallestAncestorLimit) {
  test::TempTree t;
  t.write("proc/self/cgroup", "0::/slurm/job_7/step_0\n");
  t.write("sys/fs/cgroup/slurm/memory.max", "max\n");
  t.write("sys/fs/cgroup/slurm/job_7/memory.max", "1073741824\n");
  t.write("sys/fs/cgroup/slurm/job_7/step_0/memory.max", "2147483648\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), uint64_t{1} << 30);
}

TEST(MemoryLimit, CgroupV2MaxEverywhereIsPhysicalMemory) {
  test::TempTree t;
  t.write("proc/self/cgroup", "0::/user.slice\n");
  t.write("sys/fs/cgroup/user.slice/memory.max", "max\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
}

TEST(MemoryLimit, CgroupV1LimitAndItsNoLimitValue) {
  test::TempTree t;
  t.write("proc/self/cgroup",
          "12:cpuset:/slurm/uid_1/job_3\n4:memory:/slurm/uid_1/job_3\n1:name=systemd:/x\n");
  t.write("sys/fs/cgroup/memory/slurm/memory.limit_in_bytes", "9223372036854771712\n");
  t.write("sys/fs/cgroup/memory/slurm/uid_1/job_3/memory.limit_in_bytes", "536870912\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), uint64_t{512} << 20);
  t.write("sys/fs/cgroup/memory/slurm/uid_1/job_3/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
}

TEST(MemoryLimit, CombinedControllerListInV1) {
  test::TempTree t;
  t.write("proc/self/cgroup", "3:memory,hugetlb:/job\n");
  t.write("sys/fs/cgroup/memory/job/memory.limit_in_bytes", "4096\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), 4096u);
}

TEST(MemoryLimit, NoCgroupIsPhysicalMemory) {
  test::TempTree t;
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
  t.write("proc/self/cgroup", "garbage without colons\n\n0::\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
}

TEST(MemoryLimit, GarbageLimitIsIgnored) {
  test::TempTree t;
  t.write("proc/self/cgroup", "0::/a\n");
  t.write("sys/fs/cgroup/a/memory.max", "lots\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
}

TEST(MemoryLimit, LimitAbovePhysicalIsPhysical) {
  test::TempTree t;
  t.write("proc/self/cgroup", "0::/a\n");
  t.write("sys/fs/cgroup/a/memory.max", std::to_string(physical() * 4) + "\n");
  EXPECT_EQ(memory_limit_bytes(t.root()), physical());
}

TEST(MemoryLimit, ThisMachineIsPositiveAndAtMostPhysical) {
  uint64_t m = memory_limit_bytes();
  EXPECT_GT(m, 0u);
  EXPECT_LE(m, physical());
}

}  // namespace
}  // namespace stoker
