// The plugin in slurmstepd (remote context). init_post_opt, once per node and step, as root
// after the flags were replayed, decides whether the step is tuned and loads what planning
// needs (profiles, topology through the root-owned cache); task_init,
// in each forked task just before exec, fills the task's TaskFacts from SPANK items and its
// environment, plans it (plan_input, make_plan), binds it and exports the plan. Any
// failure leaves the task untuned with exactly one warning on its stderr, never failed.
#pragma once

#include <optional>

#include "plugin_config.hpp"
#include "spank_api.hpp"

namespace stoker::spank {

// Remembers the plugstack arguments; nullopt when they were bad (the plugin is disabled).
void stepd_init(const std::optional<PluginConfig>& cfg);

// One flag's callback, replayed from the submission: records it; a value that no longer
// parses leaves the step's tasks untuned (warned at task_init). Returns 0.
int stepd_flag(int val, const char* optarg);

int stepd_init_post_opt(spank_t sp);
// Once per node per step, as the user, before any task is forked (and so before pyxis's
// task_init): keeps the step's environment and the cgroup cpuset as slurmstepd sees them.
int stepd_user_init(spank_t sp);
int stepd_task_init(spank_t sp);
// Each task as Slurm reaps it (as root, before srun learns it ended): after the node's last
// one, collects the run records (stepd_records.hpp).
void stepd_task_exit(spank_t sp);
// At the step's end (as root): collects the records if no task_exit did; frees the state.
void stepd_exit(spank_t sp);

}  // namespace stoker::spank
