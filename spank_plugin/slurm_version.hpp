// The Slurm release the plugin was built for, and the check that the running Slurm is that
// release. SPANK's structures and item numbers may change between major releases (22.05,
// 23.02, ...), so a plugin built for another one must not touch Slurm at all; bug-fix
// releases of the same major (22.05.8, 22.05.9) share the ABI.
#pragma once

#include <string>

namespace stoker::spank {

struct SlurmRelease {
  int major = 0, minor = 0;       // 22 and 5 for 22.05
  std::string to_string() const;  // "22.05"
};

// The release of the Slurm headers this plugin was compiled with (SLURM_VERSION_NUMBER).
SlurmRelease built_for_release();

// "" when `running` (Slurm's version string, "22.05.8") is `built`'s release, else the one
// log line that says the plugin is not loaded and what to do. A string that is not a Slurm
// version counts as a mismatch.
std::string slurm_release_mismatch(const std::string& running, const SlurmRelease& built);

}  // namespace stoker::spank
