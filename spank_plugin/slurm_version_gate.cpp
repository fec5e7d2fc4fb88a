#include "slurm_version_gate.hpp"

#include <string>

#include "slurm_version.hpp"

namespace stoker::spank {

bool running_slurm_matches(spank_t sp) {
  // S_SLURM_VERSION is the version compiled into the process that loaded the plugin
  // (srun, sbatch, slurmstepd), valid in every context.
  const char* running = nullptr;
  if (spank_get_item(sp, S_SLURM_VERSION, &running) != ESPANK_SUCCESS || running == nullptr)
    running = "";
  const std::string problem = slurm_release_mismatch(running, built_for_release());
  if (!problem.empty()) slurm_error("%s", problem.c_str());
  return problem.empty();
}

}  // namespace stoker::spank
