// The plugin's part of the run records in slurmstepd (record_collect.hpp does the work):
// a folder per step and node made as root in init_post_opt, its path exported to each
// task in task_init, and, once this node's last task was reaped (task_exit), the records
// collected into the admin's job_log, the folder removed, and (admin_comment=yes, the
// step's first node) the worst rank's verdict set as the job's AdminComment. Off unless
// job_log is set. Never fails a step or drains a node: each problem is one line in
// slurmd's log.
#pragma once

#include <optional>
#include <string>

#include "plugin_config.hpp"
#include "spank_api.hpp"

namespace stoker::spank {

// `name` in the job's environment (spank_getenv); nullopt when unset.
std::optional<std::string> spank_env(spank_t sp, const std::string& name);

void records_init(spank_t sp, const PluginConfig& cfg);
void records_export(spank_t sp);
// In both, `tuned`: the plugin tuned the step; a step it did not tune gets no "missing"
// lines. Collects once, when the node's last task was reaped. Slurm reaps a task before
// it tells srun the task exited, so the job log and AdminComment are written before srun
// returns; exit (`spank_fini`) runs only after srun was told, and `stoker report` right
// after srun would race it.
void records_task_ended(spank_t sp, const PluginConfig& cfg, bool tuned);
// Collects now unless done already: exit's fallback for tasks that were never reaped
// (a launch that failed on this node).
void records_collect(spank_t sp, const PluginConfig& cfg, bool tuned);

}  // namespace stoker::spank
