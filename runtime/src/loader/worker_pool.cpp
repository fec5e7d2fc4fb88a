#include "loader/worker_pool.hpp"

#include "stoker/plan/topology.hpp"

namespace stoker {

std::vector<CpuSet> split_cpus(const CpuSet& cpus, int n) {
  std::vector<CpuSet> shares(static_cast<size_t>(std::max(n, 0)));
  const std::vector<int> list = cpus.list();
  if (list.empty() || n <= 0) return shares;
  const size_t count = list.size(), workers = static_cast<size_t>(n);
  if (count < workers) {
    for (size_t i = 0; i < workers; ++i) shares[i].set(list[i % count]);
    return shares;
  }
  size_t next = 0;
  for (size_t i = 0; i < workers; ++i) {
    size_t take = count / workers + (i < count % workers ? 1 : 0);
    for (size_t k = 0; k < take; ++k) shares[i].set(list[next++]);
  }
  return shares;
}

WorkerPool::WorkerPool(std::vector<CpuSet> shares, std::function<void(int)> body)
    : shares_(std::move(shares)), bind_failures_(shares_.size()) {
  threads_.reserve(shares_.size());
  for (size_t i = 0; i < shares_.size(); ++i) {
    threads_.emplace_back([this, i, body] {
      if (!shares_[i].empty()) {
        std::string why;
        if (!bind_this_thread(shares_[i], &why)) {
          bind_failures_[i] = "worker " + std::to_string(i) + " not bound to CPUs " +
                              shares_[i].to_string() + ": " + why;
        }
      }
      body(static_cast<int>(i));
    });
    ++created_;
  }
}

WorkerPool::~WorkerPool() {
  for (auto& t : threads_) t.join();
}

}  // namespace stoker
