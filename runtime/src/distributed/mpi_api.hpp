// MPI loaded at run time: stoker links no libmpi. When a rank wants MPI (an MPI launcher's
// variables, or an application that already initialised it), mpi_api() dlopens Open MPI's
// libmpi.so.40 (HPC-X has the same ABI and soname), resolves the functions and predefined
// handles stoker uses with dlsym, and checks that Open MPI can start before anyone calls
// MPI_Init_thread, whose failure Open MPI 4.1 makes fatal (mpi_api.cpp says why and how).
// mpi.h is used at build time only, for its types and constants: its handle macros
// (MPI_COMM_WORLD, MPI_BYTE...) name libmpi's symbols, so they are never used here; the
// MpiApi members stand for them.
#pragma once

#ifdef STOKER_HAVE_MPI
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only
#endif
#include <mpi.h>

#include <functional>
#include <string>

#include "stoker/common/launch_env.hpp"

namespace stoker::distributed {

// The library dlopened, unless STOKER_MPI_LIBRARY names another (a path or a soname).
inline constexpr const char* kMpiLibrary = "libmpi.so.40";

struct MpiApi {
  decltype(&::MPI_Init_thread) Init_thread = nullptr;
  decltype(&::MPI_Initialized) Initialized = nullptr;
  decltype(&::MPI_Finalized) Finalized = nullptr;
  decltype(&::MPI_Finalize) Finalize = nullptr;
  decltype(&::MPI_Abort) Abort = nullptr;
  decltype(&::MPI_Comm_dup) Comm_dup = nullptr;
  decltype(&::MPI_Comm_free) Comm_free = nullptr;
  decltype(&::MPI_Comm_rank) Comm_rank = nullptr;
  decltype(&::MPI_Comm_size) Comm_size = nullptr;
  decltype(&::MPI_Comm_split_type) Comm_split_type = nullptr;
  decltype(&::MPI_Iallgather) Iallgather = nullptr;
  decltype(&::MPI_Ibcast) Ibcast = nullptr;
  decltype(&::MPI_Isend) Isend = nullptr;
  decltype(&::MPI_Irecv) Irecv = nullptr;
  decltype(&::MPI_Test) Test = nullptr;
  decltype(&::MPI_Waitall) Waitall = nullptr;
  decltype(&::MPI_Get_library_version) Get_library_version = nullptr;
  decltype(&::MPI_Query_thread) Query_thread = nullptr;
  decltype(&::MPI_Is_thread_main) Is_thread_main = nullptr;
  // Open MPI's predefined handles: the addresses of libmpi's ompi_mpi_* objects.
  MPI_Comm comm_world = nullptr, comm_null = nullptr;
  MPI_Datatype byte = nullptr, uint64 = nullptr;
  MPI_Info info_null = nullptr;
};

// The loaded API, or nullptr with *why set ("libmpi.so.40: cannot open shared object
// file: No such file or directory", "libmpi.so.40 has no MPI_Iallgather", "Open MPI's
// components are not installed where it looks (/usr/lib/.../openmpi3: no mca_ess_pmi.so)").
// load false: only when libmpi is already in the process (RTLD_NOLOAD), loading nothing.
// The first successful answer is kept: later calls return it at no cost. Thread-safe.
const MpiApi* mpi_api(const EnvGetter& env, bool load, std::string* why);

// Why Open MPI cannot start here ("" when nothing this check sees stops it), asked before
// MPI_Init_thread, whose failure is fatal in Open MPI 4.1 (mpi_api.cpp weighs the ways).
std::string mpi_start_problem(const MpiApi& api, const EnvGetter& env);

// Why MPI at thread level `provided` cannot carry stoker's calls ("" when it can). stoker
// calls MPI only from the application's threads that detect the world, open an image folder
// and start epochs, never from its workers; but the workers exist, so MPI_THREAD_SINGLE (one
// thread in the process) is too little. MPI_THREAD_FUNNELED is enough when the calling thread
// is MPI's main thread (MPI_Is_thread_main), MPI_THREAD_SERIALIZED or more otherwise.
std::string thread_level_problem(const MpiApi& api, int provided);

// The part of the start check that needs no library: why Open MPI (`version`, as
// MPI_Get_library_version says it) cannot start from the components folder `pkglibdir`
// ("" when it can, or when the version is not one this check knows). For the unit tests.
std::string open_mpi_components_missing(const std::string& version, const std::string& pkglibdir);

// Expands Open MPI's "${libdir}/openmpi3"-style install paths (installdirs' rule), each
// variable taken from `dirs` (name -> value, itself expanded). For the unit tests.
std::string expand_install_dir(const std::string& value,
                               const std::function<std::string(const std::string&)>& dirs);

}  // namespace stoker::distributed
#endif
