// The environment contract between the plugin and the runtime (or any framework):
// STOKER_* variables, plus the names PyTorch launchers expect. One table of them
// is in the README.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stoker/common/launch_env.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// The STOKER_* variables that describe `plan`: STOKER_PLAN_VERSION, then one per field
// (plan_fields.hpp).
EnvVars plan_to_env(const Plan& plan);

// Reads a plan back from an environment (process_env() for this process's).
// Returns nullopt when STOKER_PLAN_VERSION is absent (not under the plugin).
// Throws stoker::Error naming the variable when one is present but garbled or missing.
std::optional<Plan> read_plan(const EnvGetter& env);

// What a plan read from the environment must be on this machine (every entry point that
// uses one calls it: plugin_plan, for plan_for_this_process and stoker.plan()): CPUs of
// STOKER_CPUS, STOKER_MAIN_CPUS and STOKER_WORKER_CPUS that are not online, NUMA nodes of
// STOKER_NUMA that do not exist, and STOKER_MEM_BUDGET=0 throw stoker::Error naming the
// variable.
// (A budget below one batch is the loader's to say: Loader::for_this_process.) `root`
// points at a fake /sys in tests.
void check_env_plan(const Plan& plan, const std::string& root = "/");

}  // namespace stoker
