// Starting the runtime's threads (the loader's workers, the stream reader, the metrics
// writer). A refusal (a thread limit: ulimit -u, the pids cgroup) becomes a stoker::Error
// that names the thread, the limit with its numbers and what to do, instead of the
// std::system_error that, escaping a half-built owner, aborted the process.
#pragma once

#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "stoker/common/error.hpp"

namespace stoker {

// The error for a thread the system refused to start. `which`: "worker thread 3 of 40".
// `todo`: what the user can change besides the limit.
Error thread_start_error(const std::string& which, const std::system_error& e,
                         const std::string& todo);

template <class F>
std::thread start_thread(const std::string& which, const std::string& todo, F&& body) {
  try {
    return std::thread(std::forward<F>(body));
  } catch (const std::system_error& e) {
    throw thread_start_error(which, e, todo);
  }
}

}  // namespace stoker
