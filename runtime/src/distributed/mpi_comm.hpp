// The communicator stoker's coordination uses: a duplicate of MPI_COMM_WORLD made by
// detect_world(), so stoker's collectives never match the application's.
#pragma once

#ifdef STOKER_HAVE_MPI
// The C API only: the deprecated C++ bindings do not compile cleanly with -Wextra.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

namespace stoker::distributed {
MPI_Comm coordination_comm();  // MPI_COMM_NULL when the world is not MPI
}  // namespace stoker::distributed
#endif
