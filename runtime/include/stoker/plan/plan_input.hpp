// TaskFacts -> PlanInput: the one builder of the planner's input, for the plugin, `stoker
// plan` and the runtime alike (plan_input.cpp).
#pragma once

#include <string>

#include "stoker/plan/plan.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/task_facts.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker {

// The planner's input for `facts`, the user's options and the admin's profiles. The rules:
// - the options are checked against the profiles (they may have changed since submit);
// - profile: options.profile, else facts.default_profile, else caps.default_profile;
// - step CPUs known: the planner shares them between the local ranks (rank i of n);
//   unknown: the rank is planned alone (0 of 1) within its own mask. Why: under Slurm a
//   mask that is not the step's is one task's grant (or the plugin's binding, when the
//   runtime re-plans inside a tuned task); dividing it again would shrink it, while
//   planning alone inside it gives the same plan again (so plugin and runtime agree);
// - GPUs: local rank i uses visible[i % count] (PyTorch's LOCAL_RANK rule);
// - memory: the node's memory divided by the local ranks, unless given per rank;
// - threads: the task's thread room divided by the local ranks (they share the limit).
// Throws stoker::Error naming the input when it cannot plan (options over the caps, an
// unknown profile, GPU ids it cannot locate unless kind is ThisProcess, and for WhatIf
// anything check_plan_input refuses).
PlanInput plan_input(const TaskFacts& facts, const UserOptions& options,
                     const ProfileSet& profiles);

// The profile plan_input uses (see above).
std::string chosen_profile(const TaskFacts& facts, const UserOptions& options,
                           const ProfileSet& profiles);

}  // namespace stoker
