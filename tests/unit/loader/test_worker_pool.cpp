// The worker pool: CPU shares, binding of each thread, one creation per thread.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <future>
#include <mutex>

#include "loader/worker_pool.hpp"
#include "stoker/plan/topology.hpp"

using namespace stoker;

TEST(SplitCpus, EvenContiguousShares) {
  auto s = split_cpus(CpuSet::parse("0-9"), 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].to_string(), "0-3");
  EXPECT_EQ(s[1].to_string(), "4-6");
  EXPECT_EQ(s[2].to_string(), "7-9");
  auto t = split_cpus(CpuSet::parse("2,5,8,11"), 2);
  EXPECT_EQ(t[0].to_string(), "2,5");
  EXPECT_EQ(t[1].to_string(), "8,11");
}

TEST(SplitCpus, MoreWorkersThanCpusShareRoundRobin) {
  auto s = split_cpus(CpuSet::parse("4-5"), 5);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].to_string(), "4");
  EXPECT_EQ(s[1].to_string(), "5");
  EXPECT_EQ(s[4].to_string(), "4");
  for (const CpuSet& c : split_cpus(CpuSet(), 3)) EXPECT_TRUE(c.empty());
}

TEST(WorkerPool, ThreadsRunBoundToTheirShare) {
  const CpuSet allowed = current_cpu_mask();
  const int n = 3;
  auto shares = split_cpus(allowed, n);
  std::mutex mu;
  std::vector<CpuSet> seen(n);
  std::atomic<int> ran{0};
  {
    WorkerPool pool(shares, [&](int i) {
      std::lock_guard lk(mu);
      seen[static_cast<size_t>(i)] = current_cpu_mask();
      ++ran;
    });
    EXPECT_EQ(pool.size(), n);
    EXPECT_EQ(pool.threads_created(), static_cast<uint64_t>(n));
  }
  EXPECT_EQ(ran.load(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(seen[i], shares[i]) << "worker " << i;
}

TEST(WorkerPool, UnavailableCpuIsRecordedNotThrown) {
  std::promise<void> started;
  WorkerPool pool({CpuSet::from_list({4000})}, [&](int) { started.set_value(); });
  started.get_future().wait();  // the binding happened before the body ran
  ASSERT_EQ(pool.bind_failures().size(), 1u);
  EXPECT_NE(pool.bind_failures()[0].find("worker 0 not bound to CPUs 4000"), std::string::npos)
      << pool.bind_failures()[0];
}
