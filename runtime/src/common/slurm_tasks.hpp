// Slurm's compressed task-count lists (SLURM_STEP_TASKS_PER_NODE="2(x3),1"): how many
// tasks run on a node. Shared by the planner's local-rank lookup and the sampler's world.
#pragma once

#include <cstdint>
#include <string_view>

namespace stoker {

// Tasks on node `node` (0-based, SLURM_NODEID) of `list`; 0 past its end.
// Throws stoker::Error naming `name` when the list is malformed.
uint64_t slurm_tasks_on_node(std::string_view name, std::string_view list, uint64_t node);

}  // namespace stoker
