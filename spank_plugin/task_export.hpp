// What a task of a step with stoker on gets (the plan's STOKER_* when it is tuned, and the
// names PyTorch launchers and thread pools read, tuned or not) and the lines
// --stoker-verbose prints. Slurm-free, so unit tests link it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/plan/plan.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_input.hpp"

namespace stoker::spank {

// A task of the step, from SPANK items: its Ranks (exported as the launchers' RANK,
// WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE, which launch_ranks reads back), its job and
// step, and the step's rendezvous address.
struct StepTask : Ranks {
  uint32_t job_id = 0, step_id = 0;
  std::string master_addr;  // master_address() of the step's nodes, the same on every node
};

// kExportedVar (plan_env.hpp) records what the plugin set besides STOKER_*: "NAME=VALUE,...".
// Why: a step launched from a tuned batch step inherits the batch step's RANK, MASTER_PORT,
// OMP_NUM_THREADS...; those are the plugin's, not the user's, and are replaced.

// What task_init exports for a task of a step with stoker on; `plan` is null when the task
// is left untuned. `env` is the step's environment as user_init saw it (the job's, before
// another plugin's task_init changed it: pyxis copies a container image's environment in). Always:
// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR (when known), MASTER_PORT. With a
// plan: its STOKER_* set, STOKER_PROFILES = `profiles_file` (the admin's, when the plugstack names
// one: a launcher's workers are planned with it), CUDA_DEVICE_ORDER, and OMP_NUM_THREADS,
// MKL_NUM_THREADS, OPENBLAS_NUM_THREADS = the plan's main cores. A launcher or thread variable that
// the user set (present in `env`, the task's environment now, with another value than kExportedVar
// records) is kept; kExportedVar lists the ones exported.
EnvVars task_env(const Plan* plan, const StepTask& task, const EnvGetter& env,
                 const std::string& profiles_file = "");

// The variables of `exported` (task_env's) that another plugin set in this task before
// stoker's task_init, as "NAME=VALUE" with the value replaced: their value `now` is neither the
// job's (`job`, as user_init saw the step's environment) nor the plugin's own. pyxis's
// task_init copies a container image's environment into the task this way when its plugstack
// line comes first; a value equal to the plugin's (pyxis remaps RANK, NGC's enroot hook sets
// WORLD_SIZE and MASTER_*) is no change.
std::vector<std::string> set_before_task_init(const EnvVars& exported, const EnvGetter& job,
                                              const EnvGetter& now);

// The line naming `changed` (set_before_task_init's) on the task's stderr, said once per node:
// by the node's first local rank, "" for the others (an image's environment is the same in
// every task of the node) and when nothing changed.
std::string set_before_line(const StepTask& task, const std::vector<std::string>& changed);

// The plan, what it was planned from, the binding outcome and the planner's reasons, as
// lines of at most kMaxLine bytes: Slurm forwards a task's output in messages of at most
// 1024 bytes, and a longer line can interleave with another task's. The first line is the
// plan; reasons that do not fit go on "stoker: rank N (more reasons):" lines. The reasons
// about the input are left out: "from cpus=... gpus=... mem=..." says the same.
inline constexpr size_t kMaxLine = 1000;
std::vector<std::string> describe(const StepTask& task, const TaskFacts& facts,
                                  const PlanInput& input, const Plan& plan,
                                  const std::string& binding);

}  // namespace stoker::spank
