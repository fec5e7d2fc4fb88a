// detect_world(): MPI first, then the launchers' variables (launch_ranks).
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "mpi_comm.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"

namespace stoker {

namespace {

#ifdef STOKER_HAVE_MPI
MPI_Comm g_comm = MPI_COMM_NULL;
bool g_we_initialised = false;

void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_comm != MPI_COMM_NULL) MPI_Comm_free(&g_comm);
  if (g_we_initialised) MPI_Finalize();
}

bool mpi_launched() {
  const EnvGetter env = process_env();
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (env(v)) return true;
  }
  return false;
}

// The world as MPI sees it, or nullopt when MPI is not in use.
std::optional<World> mpi_world() {
  int initialised = 0, finalized = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalized);
  if (finalized || (!initialised && !mpi_launched())) return std::nullopt;
  if (!initialised) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      throw Error("MPI", "MPI_Init_thread failed although an MPI launcher was detected",
                  "run under mpirun or srun --mpi=pmix, or unset OMPI_*/PMIX_* variables");
    }
    g_we_initialised = true;
  }
  std::atexit(finalize_mpi);
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  World w;
  w.rank = static_cast<uint64_t>(rank);
  w.world_size = static_cast<uint64_t>(size);
  w.local_rank = static_cast<uint64_t>(local_rank);
  w.local_size = static_cast<uint64_t>(local_size);
  w.mpi = true;
  w.source = "MPI";
  return w;
}
#endif
}  // namespace

#ifdef STOKER_HAVE_MPI
MPI_Comm distributed::coordination_comm() {
  return g_comm;
}
#endif

World detect_world() {
  static std::mutex mutex;
  static std::optional<World> cached;
  std::lock_guard lock(mutex);
  if (cached) return *cached;
#ifdef STOKER_HAVE_MPI
  if (auto w = mpi_world()) return *(cached = w);
#endif
  cached = World{launch_ranks(process_env()), false};
  return *cached;
}

uint64_t seed_from_environment(uint64_t fallback) {
  return env_whole(process_env(), "STOKER_SEED", 0, UINT64_MAX).value_or(fallback);
}

}  // namespace stoker
