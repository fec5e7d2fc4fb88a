// detect_world(): MPI first, then the launchers' environment variables.
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "env_number.hpp"
#include "mpi_comm.hpp"
#include "stoker/distributed/coordination.hpp"

#include "common/slurm_tasks.hpp"
#include "stoker/error.hpp"

namespace stoker {

namespace {
using distributed::env_number;
using Env = const char* (*)(const char*);

std::string str(uint64_t v) {
  return std::to_string(v);
}

// Slurm's tasks-per-node list, "2(x3),1": 2 tasks on each of 3 nodes, then 1. Returns the
// count for node `node`, or 0 when the list is shorter.

void check_rank(WorldInfo& w, const char* rank_name, const char* size_name) {
  if (w.world_size == 0) throw Error(size_name, "is 0; a job has at least one rank");
  if (w.rank >= w.world_size) {
    throw Error(rank_name,
                "rank " + str(w.rank) + " is not below " + size_name + "=" + str(w.world_size),
                "ranks are numbered 0 to world size - 1");
  }
  if (w.local_size == 0 || w.local_rank >= w.local_size) {
    w.local_rank = 0;  // an unusable local layout: treat the rank as alone on its node
    w.local_size = 1;
  }
}

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
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

// The world as MPI sees it, or nullopt when MPI is not in use.
std::optional<WorldInfo> mpi_world() {
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
  WorldInfo w;
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

WorldInfo world_from_environment(Env env) {
  WorldInfo w;
  if (const auto rank = env_number("RANK", env("RANK"))) {
    const auto size = env_number("WORLD_SIZE", env("WORLD_SIZE"));
    if (!size) throw Error("WORLD_SIZE", "is unset while RANK is set", "set both, or neither");
    w.rank = *rank;
    w.world_size = *size;
    w.local_rank = env_number("LOCAL_RANK", env("LOCAL_RANK")).value_or(0);
    w.local_size = env_number("LOCAL_WORLD_SIZE", env("LOCAL_WORLD_SIZE")).value_or(1);
    w.source = "RANK/WORLD_SIZE";
    check_rank(w, "RANK", "WORLD_SIZE");
    return w;
  }
  if (const auto rank = env_number("SLURM_PROCID", env("SLURM_PROCID"))) {
    const auto size = env_number("SLURM_NTASKS", env("SLURM_NTASKS"));
    if (!size) throw Error("SLURM_NTASKS", "is unset while SLURM_PROCID is set");
    w.rank = *rank;
    w.world_size = *size;
    w.local_rank = env_number("SLURM_LOCALID", env("SLURM_LOCALID")).value_or(0);
    const char* list_name = "SLURM_STEP_TASKS_PER_NODE";
    const char* list = env(list_name);
    if (list == nullptr) list = env(list_name = "SLURM_TASKS_PER_NODE");
    const uint64_t node = env_number("SLURM_NODEID", env("SLURM_NODEID")).value_or(0);
    w.local_size = list ? slurm_tasks_on_node(list_name, list, node) : 1;
    w.source = "SLURM_PROCID/SLURM_NTASKS";
    check_rank(w, "SLURM_PROCID", "SLURM_NTASKS");
    return w;
  }
  w.source = "single process";
  return w;
}

WorldInfo detect_world() {
  static std::mutex mutex;
  static std::optional<WorldInfo> cached;
  std::lock_guard lock(mutex);
  if (cached) return *cached;
#ifdef STOKER_HAVE_MPI
  if (auto w = mpi_world()) return *(cached = w);
#endif
  cached =
      world_from_environment([](const char* name) -> const char* { return std::getenv(name); });
  return *cached;
}

uint64_t seed_from_environment(uint64_t fallback) {
  return env_number("STOKER_SEED", std::getenv("STOKER_SEED")).value_or(fallback);
}

}  // namespace stoker
