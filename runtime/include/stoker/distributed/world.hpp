// Who this rank is, and agreement between ranks on what an epoch is.
// With MPI (built with it and launched under it) the ranks exchange their view;
// without it the world comes from the launcher's variables (launch_ranks).
#pragma once

#include <cstdint>
#include <string>

#include "stoker/distributed/sampler.hpp"

namespace stoker {

struct WorldInfo {
  uint64_t rank = 0, world_size = 1;
  uint64_t local_rank = 0, local_size = 1;
  bool mpi = false;
  std::string source;  // "MPI", or launch_ranks' source ("RANK/WORLD_SIZE, ...")
};

// Detects the world, once per process (later calls return the same answer), in this order:
//  1. MPI, when built with it and MPI is already initialised or a launcher is present
//     (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set): initialises MPI (thread level
//     FUNNELED) if needed and finalises it at exit if it did so; local rank and size come
//     from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Collective: call it on every rank.
//  2. the launchers' variables, in launch_ranks' order (stoker/plan/launch_env.hpp):
//     Open MPI's mpirun, torchrun's RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE, Slurm's
//     SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID/SLURM_STEP_TASKS_PER_NODE, else one process.
// Throws stoker::Error naming the variable when one is malformed or inconsistent.
WorldInfo detect_world();

// STOKER_SEED when set (a whole number; else stoker::Error naming it), otherwise `fallback`.
uint64_t seed_from_environment(uint64_t fallback);

// Makes every rank agree on the seed (rank 0's is broadcast and returned), the epoch,
// the dataset size and fingerprint, the sampler options (shuffle, drop_last, block) and
// each rank's place (opts.rank/world_size must be its MPI rank and size). A mismatch
// throws stoker::Error on every rank, naming the ranks that differ and what differs
// (check_epoch_views, agreement.hpp). Collective under MPI, and it waits like one: a late
// rank is waited for, rank 0 (and rank 1, when rank 0 is the late one) printing a line
// naming it every STOKER_AGREE_WARN seconds (default 60); only when a rank has not
// arrived after STOKER_AGREE_TIMEOUT seconds (default 1800; 0: never) do the waiting
// ranks print why and call MPI_Abort.
// opts.world_size 1 (a loader one rank uses alone): no collective, returns opts.seed.
// Without MPI it returns opts.seed and says once on stderr that the ranks are not checked
// (note_unchecked_ranks).
uint64_t agree_on_epoch(const SamplerOptions& opts, uint64_t epoch);

}  // namespace stoker
