// The worker pool: CPU shares, binding of each thread, one creation per thread.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <future>
#include <mutex>

#include "loader/worker_pool.hpp"
#include "stoker/loader/worker_shares.hpp"
#include "stoker/topology/topology.hpp"

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

namespace {

Plan plan_of(const char* cpus, const char* main, const char* workers) {
  Plan p;
  p.cpus = CpuSet::parse(cpus);
  p.main_cpus = CpuSet::parse(main);
  p.worker_cpus = CpuSet::parse(workers);
  return p;
}

std::vector<std::string> texts(const std::vector<CpuSet>& shares) {
  std::vector<std::string> out;
  for (const CpuSet& s : shares) out.push_back(s.to_string());
  return out;
}

using Texts = std::vector<std::string>;

}  // namespace

TEST(WorkerShares, UpToOnePerWorkerCpuTheyShareTheWorkerCpus) {
  const Plan p = plan_of("0-7", "0", "1-7");
  EXPECT_EQ(texts(worker_shares(p, 3)), (Texts{"1-3", "4-5", "6-7"}));
  EXPECT_EQ(texts(worker_shares(p, 7)), (Texts{"1", "2", "3", "4", "5", "6", "7"}));
}

TEST(FaultsLoader, ExtraWorkersNeverStackWhileACpuOfTheRankIdles) {
  // The measured fault: a 2-CPU rank (main 0, worker 1) with 2 workers put both on CPU 1
  // while CPU 0 idled. Beyond the worker CPUs, workers take the rank's other CPUs.
  EXPECT_EQ(texts(worker_shares(plan_of("0-1", "0", "1"), 2)), (Texts{"1", "0"}));
  // More workers than CPUs: one each, round-robin, worker CPUs first.
  EXPECT_EQ(texts(worker_shares(plan_of("0-3", "0", "1-3"), 6)),
            (Texts{"1", "2", "3", "0", "1", "2"}));
  // A rank whose CPUs are all worker CPUs (a 1-core rank shares it): as before.
  EXPECT_EQ(texts(worker_shares(plan_of("5", "5", "5"), 3)), (Texts{"5", "5", "5"}));
  // No worker CPUs: nothing to pin.
  for (const CpuSet& s : worker_shares(plan_of("0-1", "0", ""), 2)) EXPECT_TRUE(s.empty());
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
