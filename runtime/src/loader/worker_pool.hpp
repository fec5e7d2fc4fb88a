// A fixed set of persistent threads, each bound to its share of CPUs (worker_shares) before it
// runs its body. The pool knows nothing of batches: the body (the loader's worker loop)
// decides when to return, and the destructor joins. Threads are created only here, once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/loader/worker_shares.hpp"

namespace stoker {

class WorkerPool {
 public:
  // Starts `shares.size()` threads. Thread i names itself "stoker-w<i>", binds itself to
  // shares[i] (when not empty; a failure is recorded, not thrown) and then runs body(i).
  // When the system refuses a thread (a thread limit), calls stop() (when given) so that
  // the bodies already running return, joins them and throws stoker::Error naming the limit.
  WorkerPool(std::vector<CpuSet> shares, std::function<void(int)> body,
             const std::function<void()>& stop = {});
  ~WorkerPool();  // joins: the owner must first make every body return (or abandon())
  // Detaches the threads: they end when their bodies return, without anyone waiting. The
  // bodies must hold what they use (and not touch the pool: its members are gone).
  void abandon();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  uint64_t threads_created() const { return created_; }
  // Per thread: "" when bound (or nothing to bind), else why not. Read only after the
  // body has signalled that it started (the binding happens before the body runs).
  const std::vector<std::string>& bind_failures() const { return bind_failures_; }
  const std::vector<CpuSet>& shares() const { return shares_; }

 private:
  std::vector<CpuSet> shares_;
  std::vector<std::string> bind_failures_;
  std::vector<std::thread> threads_;
  uint64_t created_ = 0;
};

}  // namespace stoker
