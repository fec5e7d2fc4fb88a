// What a tuned task gets (the plan's STOKER_* and the names PyTorch launchers expect) and
// the one line --stoker-verbose prints. Slurm-free, so unit tests link it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// The plan, what it was planned from, the binding outcome and the planner's reasons, as
// lines of at most kMaxLine bytes: Slurm forwards a task's output in messages of at most
// 1024 bytes, and a longer line can interleave with another task's. The first line is the
// plan; reasons that do not fit go on "stoker: rank N (more reasons):" lines. The reasons
// about the input are left out: "from cpus=... gpus=... mem=..." says the same.
inline constexpr size_t kMaxLine = 1000;
std::vector<std::string> describe(const TaskIds& ids, const World& world, const PlanInput& input,
                                  const Plan& plan, const std::string& binding);

}  // namespace stoker::spank
