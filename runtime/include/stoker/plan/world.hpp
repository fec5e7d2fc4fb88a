// What a rank can see when it is planned (a World), and the one function that turns it into
// the planner's input. Two fillers feed it: the plugin's, in task_init, from SPANK items
// and the task's environment; and the runtime's (plan_for_this_process), from /proc, the cgroup
// and the environment. Both read the shared facts through observe_task, then call
// plan_input and make_plan, so a task gets the same plan from either side.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/topology/topology.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker {

// Who fills the World: it decides what an input that cannot be used does.
enum class WorldKind {
  SlurmTask,    // the plugin: GPU ids it cannot locate leave the task untuned (an Error)
  ThisProcess,  // the runtime, `stoker plan`: such GPU ids give a CPU-only plan with the reason
  WhatIf,       // `stoker plan` with inputs given by hand: every bad input is an Error
};

// The CPUs the step's local ranks share on this node; empty when unknown.
struct StepCpus {
  CpuSet cpus;
  std::string source;  // where they came from, for the reasons and the verbose line
};

struct World {
  WorldKind kind = WorldKind::ThisProcess;
  const Topology* topology = nullptr;
  CpuSet own_mask;  // this process's mask (in the plugin: as Slurm left it)
  StepCpus step;
  // GPU ids visible to the step on this node, as Slurm numbers them ("0,1"; "" = none);
  // nullopt = nothing restricts them: every GPU of the topology.
  std::optional<std::string> gpu_ids;
  std::string gpu_ids_from;               // "SLURM_STEP_GPUS", "--gpus", ...
  std::map<int, std::string> gpu_minors;  // device minor -> PCI bus id; empty: PCI order
  uint64_t memory = 0;                    // bytes; 0 = unknown
  bool memory_per_rank = false;           // else the node's, shared by the local ranks
  std::string memory_from;
  int local_rank = 0, local_size = 1;
  std::string ranks_from;
  // Threads the task may still create (thread_room): the local ranks share it (ulimit -u
  // counts the user's threads, pids.max the job's); nullopt = no limit known.
  std::optional<uint64_t> thread_room;
  std::string thread_room_from;
  // The profile when the options name none: the plugstack default_profile (plugin), or
  // STOKER_PROFILE (runtime); "" = the profiles file's DefaultProfile.
  std::string default_profile, default_profile_from;
};

// The planner's input for `world`, the user's options and the admin's profiles. The rules:
// - the options are checked against the profiles (they may have changed since submit);
// - profile: options.profile, else world.default_profile, else caps.default_profile;
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
PlanInput plan_input(const World& world, const UserOptions& options, const ProfileSet& profiles);

// The profile plan_input uses (see above).
std::string chosen_profile(const World& world, const UserOptions& options,
                           const ProfileSet& profiles);

// What only the plugin can read (SPANK items): Slurm's memory allocation on this node in
// MB, for the step and the job; 0 = unknown.
struct SlurmAllocation {
  uint64_t step_mb = 0, job_mb = 0;
};

// Fills the facts every filler reads the same way, from `env` (the task's environment) and
// this process: own_mask, step, gpu_ids, gpu_minors, memory and thread_room. Under Slurm
// (SLURM_JOB_ID set) these are Slurm's: step_cpus, step_gpu_ids (none set: no GPUs), node memory.
// Outside Slurm (torchrun, a laptop) the local ranks share this process's mask and see every GPU
// unless CUDA_VISIBLE_DEVICES says otherwise. `root` lets tests point at a fake /proc and
// /sys tree.
void observe_task(World& world, const EnvGetter& env, const SlurmAllocation& alloc = {},
                  const std::string& root = "/");

// The union of the local tasks' masks from SLURM_CPU_BIND_TYPE/_LIST ("mask_cpu:" +
// "0x3,0xC" or "map_cpu:" + "0,1"). Empty when Slurm did not bind (type none or absent)
// or the list is malformed.
CpuSet cpu_bind_union(std::string_view type, std::string_view list);

// The CPUs of this process's cgroup cpuset (v2 cpuset.cpus.effective, else v1
// cpuset.effective_cpus / cpuset.cpus). Empty when there is none.
CpuSet cgroup_cpuset(const std::string& root = "/");

// The step's CPUs on this node: the union of the local tasks' Slurm masks, narrowed to the
// cgroup cpuset when there is one; else the cgroup cpuset alone; else unknown.
StepCpus step_cpus(const EnvGetter& env, const std::string& root = "/");

// The step's GPU ids on this node as Slurm numbers them (device minors): SLURM_STEP_GPUS,
// else SLURM_JOB_GPUS (batch step), else CUDA_VISIBLE_DEVICES; the first one set and not
// empty, with its name. nullopt when none is.
struct GpuIds {
  std::string ids, from;
};
std::optional<GpuIds> step_gpu_ids(const EnvGetter& env);

// The memory of this node's share of the job, in this order: the step's (else the job's)
// allocation from SPANK items; Slurm's allocation as the environment gives it
// (SLURM_MEM_PER_NODE, else SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE, in MB); else this
// process's memory limit (cgroup, else physical).
struct NodeMemory {
  uint64_t bytes = 0;
  std::string from;
};
NodeMemory node_memory(const EnvGetter& env, const SlurmAllocation& alloc = {},
                       const std::string& root = "/");

// Which jobs the plugin tunes: every job unless --stoker=off, only jobs with a stoker flag,
// or none (the plugstack argument enable=).
enum class EnableMode { Always, OptIn, Never };

// Step kinds as Slurm numbers them (slurm.h).
enum class StepKind { Normal, Batch, Interactive, Extern };
StepKind step_kind(uint32_t step_id);

// Whether a step's tasks are tuned, with the reason when not. `any_flag`: some --stoker*
// flag was given; `batch_step`: the plugstack argument batch_step=yes.
struct TuneDecision {
  bool tune = false;
  std::string why_not;
};
TuneDecision should_tune(EnableMode enable, bool batch_step, const UserOptions& options,
                         bool any_flag, StepKind kind);

}  // namespace stoker
