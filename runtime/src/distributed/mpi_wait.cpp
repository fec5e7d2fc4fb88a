#include "mpi_wait.hpp"

#ifdef STOKER_HAVE_MPI
#include <cstdio>
#include <thread>

namespace stoker::distributed {

void wait_like_a_collective(const MpiApi& mpi, MPI_Comm comm, MPI_Request& request,
                            const AgreeWait& wait,
                            const std::function<void(std::chrono::seconds)>& note,
                            const std::function<std::string()>& timed_out) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_note = start + wait.warn;
  auto pause = std::chrono::microseconds(50);
  for (int done = 0;;) {
    mpi.Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto now = Clock::now();
    if (wait.timeout.count() > 0 && now - start > wait.timeout) {
      std::fprintf(stderr, "stoker: %s; aborting the job\n", timed_out().c_str());
      mpi.Abort(comm, 3);
    }
    if (now >= next_note) {
      next_note += wait.warn;
      note(std::chrono::duration_cast<std::chrono::seconds>(now - start));
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
}

}  // namespace stoker::distributed
#endif
