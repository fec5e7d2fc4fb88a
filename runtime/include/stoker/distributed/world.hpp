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

// The runtime switch for MPI: 1 asks for it, 0 keeps it off (see mpi_choice).
inline constexpr const char* kMpiVar = "STOKER_MPI";

// Whether this process wants MPI, as its environment says (an application that initialised
// MPI itself is looked at apart: that needs its libmpi). In this order:
//  - STOKER_MPI=0: never, not even the application's MPI; STOKER_MPI=1: wanted
//    (stoker::Error naming the variable for any other value);
//  - Open MPI's launcher (OMPI_COMM_WORLD_SIZE: mpirun, orterun, prterun) when no other
//    launcher owns the process: torchrun (TORCHELASTIC_RUN_ID), or RANK, WORLD_SIZE and
//    LOCAL_RANK all set, and not as stoker's plugin set them (STOKER_EXPORTED): wanted;
//  - else only if the application initialised it. PMIX_RANK or PMI_RANK alone (srun
//    --mpi=pmix, MpiDefault=pmix) is no request: every task of such a step has it, torch's
//    ranks too. An MPI program (mpi_program: the example trainer, which calls MPI itself)
//    wants MPI under any MPI-capable launcher: PMIX_RANK, PMI_RANK or OMPI_COMM_WORLD_SIZE.
struct MpiChoice {
  enum Use { never, if_initialised, wanted } use = if_initialised;
  std::string why;  // "STOKER_MPI=1", "torchrun's worker", ...
};
MpiChoice mpi_choice(const EnvGetter& env, bool mpi_program = false);

// Detects the world, once per process (later calls return the same answer), in this order:
//  1. MPI, when built with it and this process wants it (mpi_choice) or the application
//     already initialised it: loads Open MPI's libmpi.so.40 (STOKER_MPI_LIBRARY names
//     another) at run time, initialises MPI (thread level FUNNELED) if needed and finalises
//     it at exit if it did so; local rank and size come from
//     MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Collective: call it on every rank.
//     When MPI is wanted but cannot be used here (no libmpi, not Open MPI's ABI, Open MPI
//     not completely installed, a thread level too low for stoker: mpi_api.hpp), it says why
//     in one line on stderr and goes on to 2. A process that does not want MPI never loads
//     libmpi.
//  2. the launchers' variables, in launch_ranks' order (stoker/common/launch_env.hpp):
//     Open MPI's mpirun, torchrun's RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE, Slurm's
//     SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID/SLURM_STEP_TASKS_PER_NODE, else one process.
// Throws stoker::Error naming the variable when one is malformed or inconsistent.
// The first call decides: an MPI program passes mpi_program (see mpi_choice) before anything
// of stoker's detects the world.
World detect_world(bool mpi_program = false);

// Why MPI was wanted but could not be used (mpi_api.hpp's texts), "" when it was used or
// not wanted, or before detect_world() ran.
std::string mpi_unusable_reason();

// STOKER_SEED when set (a whole number; else stoker::Error naming it), otherwise `fallback`.
uint64_t seed_from_environment(uint64_t fallback);

}  // namespace stoker
