// Who this rank is, and agreement between ranks on what an epoch is.
// With MPI (built with it and launched under it) the ranks exchange their view;
// without it the world comes from RANK/WORLD_SIZE or SLURM_PROCID/SLURM_NTASKS.
#pragma once

#include <cstdint>
#include <string>

#include "stoker/sampler.hpp"

namespace stoker {

struct WorldInfo {
  uint64_t rank = 0, world_size = 1;
  uint64_t local_rank = 0, local_size = 1;
  bool mpi = false;
  std::string source;  // "MPI", "RANK/WORLD_SIZE", "SLURM_PROCID/SLURM_NTASKS", "single process"
};

// Detects the world. Initialises MPI (thread level FUNNELED or better) when built
// with it and a launcher is present, and finalises it at exit if it did so.
WorldInfo detect_world();

// Makes every rank agree on the seed (rank 0's is broadcast and returned), the epoch,
// the dataset size and fingerprint. A mismatch throws stoker::Error on every rank,
// naming the ranks that differ and what differs, within seconds; never hangs.
// Without MPI it returns opts.seed.
uint64_t agree_on_epoch(const SamplerOptions& opts, uint64_t epoch);

}  // namespace stoker
