// The plugin's part of the run records in slurmstepd (record_collect.hpp does the work):
// a folder per step and node made as root in init_post_opt, its path exported to each
// task in task_init, and, in exit after the tasks ended, the records collected into the
// admin's job_log, the folder removed, and (admin_comment=yes, the step's first node) the
// worst rank's verdict set as the job's AdminComment. Off unless job_log is set. Never
// fails a step or drains a node: each problem is one line in slurmd's log.
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
// `tuned`: the plugin tuned the step; a step it did not tune gets no "missing" lines.
void records_collect(spank_t sp, const PluginConfig& cfg, bool tuned);

}  // namespace stoker::spank
