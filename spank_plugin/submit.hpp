// The plugin in srun, sbatch and salloc (local and allocator context): each --stoker flag
// is checked at once against the admin's profiles and caps, so a bad value stops the
// submission with one line and nothing is queued.
#pragma once

#include <optional>

#include "plugin_config.hpp"

namespace stoker::spank {

// Remembers the plugstack arguments; nullopt when they were bad (the plugin is disabled).
void submit_init(const std::optional<PluginConfig>& cfg);

// One flag's callback: records it, then checks all flags so far. Returns 0, or -1 after
// printing the problem (srun/sbatch then exit non-zero).
int submit_flag(int val, const char* optarg);

void submit_exit();

}  // namespace stoker::spank
