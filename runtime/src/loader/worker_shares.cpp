#include "stoker/loader/worker_shares.hpp"

#include <algorithm>

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

std::vector<CpuSet> worker_shares(const Plan& plan, int workers) {
  const CpuSet others = plan.cpus - plan.worker_cpus;
  if (plan.worker_cpus.empty() || workers <= plan.worker_cpus.count() || others.empty())
    return split_cpus(plan.worker_cpus, workers);
  std::vector<int> order = plan.worker_cpus.list();
  for (int cpu : others.list()) order.push_back(cpu);
  std::vector<CpuSet> shares(static_cast<size_t>(workers));
  for (size_t i = 0; i < shares.size(); ++i) shares[i].set(order[i % order.size()]);
  return shares;
}

}  // namespace stoker
