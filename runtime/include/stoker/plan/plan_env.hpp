// The environment contract between the plugin and the runtime (or any framework):
// STOKER_* variables, plus the names PyTorch launchers expect. docs/reference.md
// tables them.
#pragma once

#include <cstdint>
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

// STOKER_PLAN_SEAL: the plugin's own copy of the STOKER_* variables it exported for a task,
// "NAME=VALUE;NAME=VALUE;...". Something that runs after the plugin can replace a STOKER_*
// variable: a container image's environment (pyxis and enroot apply it before or after the
// plugin, by plugstack order; Apptainer passes the host's and adds its own), or a wrapper.
// The runtime reads the plan from the seal, so the plugin's plan wins, and names each variable
// that differs (sealed_env). A value holding ';' is left out of the seal. The seal begins with
// the Slurm step it was made for, "@step=JOB.STEP;": a step launched from a tuned step (srun
// inside a tuned batch step) inherits that step's STOKER_* and seal, and its processes must
// not take that plan (made for another step's tasks) for their own.
inline constexpr const char* kPlanSealVar = "STOKER_PLAN_SEAL";
std::string plan_seal(const EnvVars& vars, uint32_t job_id, uint32_t step_id);

// The plugin's record of the launcher and thread variables it set besides STOKER_*,
// "NAME=VALUE,..." (RANK, MASTER_PORT, OMP_NUM_THREADS, ...).
inline constexpr const char* kExportedVar = "STOKER_EXPORTED";

// Set to 1 by the plugin for --stoker-verbose: the runtime's summary and placement lines.
inline constexpr const char* kVerboseVar = "STOKER_VERBOSE";
// The admin's profiles file: the plugin passes it on, `stoker plan` and stoker.plan() read it.
inline constexpr const char* kProfilesVar = "STOKER_PROFILES";

// `env` as the plugin left it: each variable the seal names reads the seal's value. `changed`
// says, for each that differs in `env`, "NAME=VALUE (the plugin's VALUE)" or "NAME unset (the
// plugin's VALUE)". `threads_changed` says the same of OMP_NUM_THREADS, MKL_NUM_THREADS and
// OPENBLAS_NUM_THREADS against what kExportedVar records (an image's own value replaces the
// plugin's; torch and BLAS size their pools from it before stoker runs, so these are named,
// not undone). Without a seal (no plugin, a plan made in Python), `env` as it is. An empty seal
// (cleared by an image or a wrapper) leaves `env` as it is, and `note` says so. A seal of
// another step than SLURM_JOB_ID and SLURM_STEP_ID say (when both are set) leaves `env` as it
// is, and sets `other_step` and `note`: its STOKER_* plan was inherited, not made for this
// process.
struct SealedEnv {
  EnvGetter env;
  std::vector<std::string> changed, threads_changed;
  std::string note;
  bool other_step = false;
};
SealedEnv sealed_env(const EnvGetter& env);

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
