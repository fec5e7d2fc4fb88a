// Which process an object that owns threads or locks belongs to (a Loader, its batches, a
// MetricsWriter, the Python module's loader). fork() copies such an object into the child
// without its threads, and with its locks as they were at that instant, possibly held by
// threads that do not exist there: waiting for the workers, joining them or taking a lock
// would hang the child forever (DataLoader-style libraries and multiprocessing fork).
// In a forked child the object refuses to be used and, when destroyed, leaves its threads,
// locks and memory alone (they go with the child's process).
#pragma once

#include <cstdint>
#include <string>

namespace stoker {

class ForkCheck {
 public:
  ForkCheck();  // this process
  // True in a process forked (pthread_atfork) after this object was made.
  bool forked() const;
  // Throws stoker::Error naming `what` when forked(): "created in another process (pid P);
  // this is a forked child (pid C)", and to make a new one in the child.
  void check(const std::string& what) const;

 private:
  uint64_t generation_;
  int pid_;
};

}  // namespace stoker
