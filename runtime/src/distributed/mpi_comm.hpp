// The communicator stoker's coordination uses: a duplicate of MPI_COMM_WORLD made by
// detect_world(), so stoker's collectives never match the application's; and the MPI
// functions, loaded at run time (mpi_api.hpp).
#pragma once

#ifdef STOKER_HAVE_MPI
#include "mpi_api.hpp"

namespace stoker::distributed {
MPI_Comm coordination_comm();      // nullptr when the world is not MPI
const MpiApi* coordination_api();  // nullptr when the world is not MPI
}  // namespace stoker::distributed
#endif
