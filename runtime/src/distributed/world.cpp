// detect_world(): MPI first (loaded at run time: mpi_api.hpp), then the launchers'
// variables (launch_ranks).
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "mpi_comm.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker {

namespace {

std::mutex g_world_mutex;  // detect_world's
std::string g_unusable;    // why MPI was wanted but could not be used ("" otherwise)

#ifdef STOKER_HAVE_MPI
using distributed::MpiApi;
const MpiApi* g_api = nullptr;  // set when the world is MPI's
MPI_Comm g_comm = nullptr;
bool g_we_initialised = false;

void finalize_mpi() {
  int finalized = 0;
  g_api->Finalized(&finalized);
  if (finalized) return;
  if (g_comm != g_api->comm_null) g_api->Comm_free(&g_comm);
  if (g_we_initialised) g_api->Finalize();
}

bool mpi_launched(const EnvGetter& env) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (env(v)) return true;
  }
  return false;
}

// The world as MPI sees it, or nullopt when MPI is not in use. MPI is wanted when the
// application already initialised it (its libmpi is then in the process: looked up without
// loading anything) or an MPI launcher's variables are set (libmpi is loaded then). When it
// is wanted but cannot be used, g_unusable says why, and the rank goes on without it.
std::optional<World> mpi_world() {
  const EnvGetter env = process_env();
  std::string why;
  const MpiApi* api = distributed::mpi_api(env, false, &why);
  int initialised = 0, finalized = 0;
  if (api) {
    api->Initialized(&initialised);
    api->Finalized(&finalized);
  }
  if (finalized || (!initialised && !mpi_launched(env))) return std::nullopt;
  if (!api) api = distributed::mpi_api(env, true, &why);
  if (!api) {
    g_unusable = why;
    return std::nullopt;
  }
  if (!initialised) {
    api->Initialized(&initialised);
    api->Finalized(&finalized);
    if (finalized) return std::nullopt;
  }
  if (!initialised) {
    if (std::string problem = distributed::mpi_start_problem(*api, env); !problem.empty()) {
      g_unusable = problem;
      return std::nullopt;
    }
    int provided = 0;
    if (api->Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      g_unusable = "MPI_Init_thread failed";  // reached only with non-fatal errors
      return std::nullopt;
    }
    g_we_initialised = true;
  }
  g_api = api;
  std::atexit(finalize_mpi);
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  api->Comm_rank(api->comm_world, &rank);
  api->Comm_size(api->comm_world, &size);
  MPI_Comm node;
  api->Comm_split_type(api->comm_world, MPI_COMM_TYPE_SHARED, rank, api->info_null, &node);
  api->Comm_rank(node, &local_rank);
  api->Comm_size(node, &local_size);
  api->Comm_free(&node);
  api->Comm_dup(api->comm_world, &g_comm);
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
  return g_api ? g_comm : nullptr;
}

const distributed::MpiApi* distributed::coordination_api() {
  return g_api;
}
#endif

World detect_world() {
  static std::optional<World> cached;
  std::lock_guard lock(g_world_mutex);
  if (cached) return *cached;
#ifdef STOKER_HAVE_MPI
  if (auto w = mpi_world()) return *(cached = w);
#endif
  cached = World{launch_ranks(process_env()), false};
  if (!g_unusable.empty()) {
    // The one line of a rank whose MPI cannot start (note_unchecked_ranks stays quiet then).
    std::fprintf(stderr,
                 "stoker: rank %llu: MPI is not usable here (%s): ranks are not checked at "
                 "epoch starts (torch.distributed is used when initialised)\n",
                 static_cast<unsigned long long>(cached->rank), g_unusable.c_str());
  }
  return *cached;
}

std::string mpi_unusable_reason() {
  std::lock_guard lock(g_world_mutex);
  return g_unusable;
}

uint64_t seed_from_environment(uint64_t fallback) {
  return env_whole(process_env(), "STOKER_SEED", 0, UINT64_MAX).value_or(fallback);
}

}  // namespace stoker
