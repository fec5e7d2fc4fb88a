// detect_world(): MPI first when this process wants it (loaded at run time: mpi_api.hpp),
// then the launchers' variables (launch_ranks).
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "mpi_comm.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/plan/plan_env.hpp"

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

// The world as MPI sees it, or nullopt when MPI is not in use. MPI is used when this
// process wants it (mpi_choice: STOKER_MPI=1, or Open MPI's launcher owning the process; libmpi
// is loaded then), or when the application already initialised it (its libmpi is then in the
// process: looked up without loading anything), unless STOKER_MPI=0. When it is wanted but
// cannot be used, g_unusable says why, and the rank goes on without it.
std::optional<World> mpi_world(bool mpi_program) {
  const EnvGetter env = process_env();
  const MpiChoice choice = mpi_choice(env, mpi_program);
  if (choice.use == MpiChoice::never) return std::nullopt;
  std::string why;
  const MpiApi* api = distributed::mpi_api(env, false, &why);
  int initialised = 0, finalized = 0;
  if (api) {
    api->Initialized(&initialised);
    api->Finalized(&finalized);
  }
  if (finalized || (!initialised && choice.use != MpiChoice::wanted)) return std::nullopt;
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
    if (std::string problem = distributed::thread_level_problem(*api, provided); !problem.empty()) {
      g_unusable = problem;
      api->Finalize();
      return std::nullopt;
    }
  } else {
    int provided = 0;
    api->Query_thread(&provided);
    if (std::string problem = distributed::thread_level_problem(*api, provided); !problem.empty()) {
      g_unusable = problem + " (the application's MPI_Init)";
      return std::nullopt;
    }
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

MpiChoice mpi_choice(const EnvGetter& env, bool mpi_program) {
  if (const auto v = env_whole(env, kMpiVar, 0, 1)) {
    return *v ? MpiChoice{MpiChoice::wanted, "STOKER_MPI=1"}
              : MpiChoice{MpiChoice::never, "STOKER_MPI=0"};
  }
  if (mpi_program) {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
      if (env(v)) return {MpiChoice::wanted, std::string("an MPI program launched with ") + v};
    }
  }
  // Open MPI's launchers (mpirun/orterun, and Open MPI 5's mpirun/prterun) give every rank
  // OMPI_COMM_WORLD_*. srun --mpi=pmix's PMIX_RANK (and PMI_RANK) says nothing of the kind:
  // under MpiDefault=pmix every task has it, every torch.distributed rank too, and under
  // srun ... torchrun a node's workers all inherit one PMIX_RANK (MPI_Init as one PMIx rank
  // from several processes). An MPI program started by srun initialises MPI itself, or says
  // STOKER_MPI=1.
  if (!env("OMPI_COMM_WORLD_SIZE")) return {MpiChoice::if_initialised, "no MPI launcher"};
  // Another launcher owns the process when it started it below mpirun: torchrun
  // (TORCHELASTIC_RUN_ID), or any that sets torch's group variables, unless stoker's plugin
  // set them (STOKER_EXPORTED records what it set).
  if (env("TORCHELASTIC_RUN_ID")) return {MpiChoice::if_initialised, "torchrun's worker"};
  const auto plugins = split_assignments(env(kExportedVar).value_or(""), ',');
  bool torch_group = true;
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK"}) {
    const auto value = env(name);
    const auto set_by_plugin = plugins.find(name);
    torch_group =
        torch_group && value && (set_by_plugin == plugins.end() || set_by_plugin->second != *value);
  }
  if (torch_group) return {MpiChoice::if_initialised, "RANK/WORLD_SIZE/LOCAL_RANK's launcher"};
  return {MpiChoice::wanted, "Open MPI's launcher (OMPI_COMM_WORLD_SIZE)"};
}

World detect_world(bool mpi_program) {
  static std::optional<World> cached;
  std::lock_guard lock(g_world_mutex);
  if (cached) return *cached;
#ifdef STOKER_HAVE_MPI
  if (auto w = mpi_world(mpi_program)) return *(cached = w);
#else
  (void)mpi_program;
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
