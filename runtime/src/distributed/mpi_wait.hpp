// How stoker's MPI collectives wait (the epoch agreement, the shared listing): polling the
// nonblocking request, so that a late rank is waited for with a note every
// STOKER_AGREE_WARN seconds, and a rank that never comes aborts the job after
// STOKER_AGREE_TIMEOUT instead of hanging every other rank for good.
#pragma once

#ifdef STOKER_HAVE_MPI
#include <chrono>
#include <functional>
#include <string>

#include "mpi_comm.hpp"
#include "stoker/distributed/agree_wait.hpp"

namespace stoker::distributed {

// Polls `request` until it completes. Every wait.warn: note(waited so far). Past
// wait.timeout (0: never): prints "stoker: " + timed_out() + "; aborting the job" on stderr
// and calls MPI_Abort on `comm`.
void wait_like_a_collective(const MpiApi& mpi, MPI_Comm comm, MPI_Request& request,
                            const AgreeWait& wait,
                            const std::function<void(std::chrono::seconds)>& note,
                            const std::function<std::string()>& timed_out);

}  // namespace stoker::distributed
#endif
