// What a tuned task gets (the plan's STOKER_* and the names PyTorch launchers expect) and
// the one line --stoker-verbose prints. Slurm-free, so unit tests link it.
#pragma once

#include <cstdint>
#include <string>

#include "stoker/plan/plan.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/world.hpp"

namespace stoker::spank {

// A task's place in its step, from SPANK items and its environment.
struct TaskIds {
  uint32_t rank = 0, world_size = 1;
  int local_rank = 0, local_size = 1;
  uint32_t job_id = 0;
  std::string nodelist;  // the step's nodes (SLURM_STEP_NODELIST)
};

// STOKER_* + RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
// CUDA_DEVICE_ORDER.
EnvVars task_env(const Plan& plan, const TaskIds& ids);

// The plan, what it was planned from, the binding outcome and the planner's reasons.
std::string describe(const TaskIds& ids, const World& world, const PlanInput& input,
                     const Plan& plan, const std::string& binding);

}  // namespace stoker::spank
