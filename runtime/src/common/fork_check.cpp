#include "stoker/common/fork_check.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "stoker/common/error.hpp"

namespace stoker {

namespace {

// Counts the forks between the first ForkCheck of this process's line and now: each child
// adds one to the count it copied from its parent. No system call to compare.
std::atomic<uint64_t> g_forks{0};

void after_fork_in_child() {
  g_forks.fetch_add(1, std::memory_order_relaxed);
}

uint64_t forks() {
  static const bool registered = ::pthread_atfork(nullptr, nullptr, after_fork_in_child) == 0;
  (void)registered;
  return g_forks.load(std::memory_order_relaxed);
}

}  // namespace

ForkCheck::ForkCheck() : generation_(forks()), pid_(static_cast<int>(::getpid())) {}

bool ForkCheck::forked() const {
  return forks() != generation_;
}

void ForkCheck::check(const std::string& what) const {
  if (!forked()) return;
  throw Error(what,
              "was created in another process (pid " + std::to_string(pid_) +
                  "); this is a forked child (pid " + std::to_string(::getpid()) +
                  ") without its worker threads",
              "make a new one in the child (and let the parent's be)");
}

}  // namespace stoker
