#include "loader/worker_pool.hpp"

#include <pthread.h>

#include "stoker/topology/topology.hpp"
#include "topology/thread_start.hpp"

namespace stoker {

WorkerPool::WorkerPool(std::vector<CpuSet> shares, std::function<void(int)> body,
                       const std::function<void()>& stop)
    : shares_(std::move(shares)), bind_failures_(shares_.size()) {
  threads_.reserve(shares_.size());
  for (size_t i = 0; i < shares_.size(); ++i) {
    const std::string which =
        "worker thread " + std::to_string(i + 1) + " of " + std::to_string(shares_.size());
    auto run = [this, i, body] {
      // "stoker-w<i>" in top -H, /proc/<pid>/task/*/comm and debuggers (15 bytes at most).
      pthread_setname_np(pthread_self(), ("stoker-w" + std::to_string(i % 10000000)).c_str());
      if (!shares_[i].empty()) {
        std::string why;
        if (!bind_this_thread(shares_[i], &why)) {
          bind_failures_[i] = "worker " + std::to_string(i) + " not bound to CPUs " +
                              shares_[i].to_string() + ": " + why;
        }
      }
      body(static_cast<int>(i));
    };
    try {
      threads_.push_back(start_thread(
          which, "use fewer workers (--workers, workers=, LoaderOptions::workers)", run));
    } catch (...) {
      if (stop) stop();  // the started bodies return: a joinable thread must not be destroyed
      for (auto& t : threads_) t.join();
      throw;
    }
    ++created_;
  }
}

WorkerPool::~WorkerPool() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::abandon() {
  for (auto& t : threads_) t.detach();
}

}  // namespace stoker
