#include "topology/thread_start.hpp"

#include "stoker/topology/topology.hpp"

namespace stoker {

Error thread_start_error(const std::string& which, const std::system_error& e,
                         const std::string& todo) {
  const ThreadRoom room = thread_room();
  return Error(which,
               std::string("cannot be started: ") + e.what() + "; this process " + room.text(),
               todo + (todo.empty() ? "" : ", or ") +
                   "raise the limit named (ulimit -u; a cgroup's pids.max, systemd's TasksMax)");
}

}  // namespace stoker
