// Who this rank is among the job's ranks: the World as MPI sees it (built with MPI and
// launched under it), else as the launcher's variables say (launch_ranks).
#pragma once

#include <cstdint>
#include <string>

#include "stoker/common/launch_env.hpp"

namespace stoker {

// This process's Ranks (source: "MPI", or launch_ranks' "RANK/WORLD_SIZE, ..."), and
// whether they are MPI's: only then do the ranks exchange anything (agree_on_epoch).
struct World : Ranks {
  bool mpi = false;
};

// Detects the world, once per process (later calls return the same answer), in this order:
//  1. MPI, when built with it and MPI is already initialised or a launcher is present
//     (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set): loads Open MPI's libmpi.so.40
//     (STOKER_MPI_LIBRARY names another) at run time, initialises MPI (thread level
//     FUNNELED) if needed and finalises it at exit if it did so; local rank and size come
//     from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Collective: call it on every rank.
//     When MPI is wanted but cannot be used here (no libmpi, not Open MPI's ABI, Open MPI
//     not completely installed), it says why in one line on stderr and goes on to 2.
//  2. the launchers' variables, in launch_ranks' order (stoker/common/launch_env.hpp):
//     Open MPI's mpirun, torchrun's RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE, Slurm's
//     SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID/SLURM_STEP_TASKS_PER_NODE, else one process.
// Throws stoker::Error naming the variable when one is malformed or inconsistent.
World detect_world();

// Why MPI was wanted but could not be used (mpi_api.hpp's texts), "" when it was used or
// not wanted, or before detect_world() ran.
std::string mpi_unusable_reason();

// STOKER_SEED when set (a whole number; else stoker::Error naming it), otherwise `fallback`.
uint64_t seed_from_environment(uint64_t fallback);

}  // namespace stoker
