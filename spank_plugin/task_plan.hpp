// One task's plan: the Slurm-side facts about a task (gathered by the plugin in
// task_init) turned into planner inputs, the planner's Plan, and the environment
// the task gets. The planning itself is stoker_core's make_plan; this file only
// translates, so `stoker plan` with the same inputs gives the same plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin_config.hpp"
#include "slurm_world.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/topology.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::spank {

struct TaskView {
  const Topology* topology = nullptr;
  StepCpus step;        // the step's CPUs on this node (may be unknown)
  CpuSet own_mask;      // the task's mask as Slurm left it
  std::string gpu_ids;  // the step's GPU ids on this node ("0,1"; "" = none)
  int local_rank = 0, local_size = 1;
  uint32_t rank = 0, world_size = 1;
  uint32_t job_id = 0;
  std::string nodelist;    // the step's nodes (SLURM_STEP_NODELIST)
  uint64_t mem_bytes = 0;  // memory this rank may use
};

struct TaskTuning {
  PlanInput input;  // what the planner was given (the verbose line prints it)
  Plan plan;
  EnvVars env;  // STOKER_* + RANK, LOCAL_RANK, ... + CUDA_DEVICE_ORDER
};

// The profile a job uses: --stoker-profile, else the plugstack default_profile,
// else the profiles file's DefaultProfile.
std::string chosen_profile(const PluginConfig& cfg, const UserOptions& opts,
                           const ProfileSet& profiles);

// Plans one task. Throws stoker::Error when the task cannot be tuned (unknown
// profile, flags over the caps, GPU ids not on this node): the caller then warns
// once and leaves the task untuned.
TaskTuning plan_task(const TaskView& task, const PluginConfig& cfg, const UserOptions& opts,
                     const ProfileSet& profiles);

// What --stoker-verbose prints per rank: one line with the plan, what it was planned
// from, the binding outcome and the planner's reasons; reasons that would make the line
// longer than kMaxVerboseLine bytes continue on lines "stoker: rank N reasons: ...".
inline constexpr size_t kMaxVerboseLine = 1000;
std::string describe(const TaskView& task, const TaskTuning& t, const std::string& binding);

}  // namespace stoker::spank
