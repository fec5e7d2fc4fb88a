// The plugin's first act in every context (srun, sbatch, slurmstepd): read the running
// Slurm's version from SPANK and refuse to go on under another release than the one it was
// built for, with one log line.
#pragma once

#include "spank_api.hpp"

namespace stoker::spank {

// True when the running Slurm is the release this plugin was built for; otherwise logs
// slurm_release_mismatch()'s line with slurm_error and returns false.
bool running_slurm_matches(spank_t sp);

}  // namespace stoker::spank
