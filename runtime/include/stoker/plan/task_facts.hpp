// What a rank can see when it is planned (its TaskFacts), and how they are observed. Two
// fillers: the plugin's, in task_init, from SPANK items and the task's environment; and the
// runtime's (plan_for_this_process), from /proc, the cgroup and the environment. Both read the
// shared facts through observe_task, then call plan_input (plan_input.hpp) and make_plan,
// so a task gets the same plan from either side.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {

// Who fills the TaskFacts: it decides what an input that cannot be used does.
enum class FactsKind {
  SlurmTask,    // the plugin: GPU ids it cannot locate leave the task untuned (an Error)
  ThisProcess,  // the runtime, `stoker plan`: such GPU ids give a CPU-only plan with the reason
  WhatIf,       // `stoker plan` with inputs given by hand: every bad input is an Error
};

// The CPUs the step's local ranks share on this node; empty when unknown.
struct StepCpus {
  CpuSet cpus;
  std::string source;  // where they came from, for the reasons and the verbose line
};

struct TaskFacts {
  FactsKind kind = FactsKind::ThisProcess;
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

// What only the plugin in slurmstepd can read. From SPANK items: Slurm's memory allocation
// on this node in MB, for the step and the job; 0 = unknown. `stepd_cgroup`: the cgroup
// cpuset slurmstepd saw at user_init, before the task joined a container's namespaces
// (pyxis joins them in its task_init, and the step's cgroup is then out of view); empty = none.
struct StepdFacts {
  uint64_t step_mb = 0, job_mb = 0;
  CpuSet stepd_cgroup;
};

// Fills the facts every filler reads the same way, from `env` (the task's environment) and
// this process: own_mask, step, gpu_ids, gpu_minors, memory and thread_room. Under Slurm
// (SLURM_JOB_ID set) these are Slurm's: step_cpus, step_gpu_ids (none set: no GPUs), node memory.
// Outside Slurm (torchrun, a laptop) the local ranks share this process's mask and see every GPU
// unless CUDA_VISIBLE_DEVICES says otherwise. `root` lets tests point at a fake /proc and
// /sys tree.
void observe_task(TaskFacts& facts, const EnvGetter& env, const StepdFacts& stepd = {},
                  const std::string& root = "/");

// The union of the local tasks' masks from SLURM_CPU_BIND_TYPE/_LIST ("mask_cpu:" +
// "0x3,0xC" or "map_cpu:" + "0,1"). Empty when Slurm did not bind (type none or absent)
// or the list is malformed.
CpuSet cpu_bind_union(std::string_view type, std::string_view list);

// The CPUs of this process's cgroup cpuset (v2 cpuset.cpus.effective, else v1
// cpuset.effective_cpus / cpuset.cpus). Empty when there is none.
CpuSet cgroup_cpuset(const std::string& root = "/");

// The step's CPUs on this node: the union of the local tasks' Slurm masks, narrowed to the
// cgroup cpuset when there is one; else the cgroup cpuset alone; else unknown. The cgroup is
// this process's, else `stepd_cgroup` (StepdFacts) when this process sees none.
StepCpus step_cpus(const EnvGetter& env, const std::string& root = "/",
                   const CpuSet& stepd_cgroup = {});

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
NodeMemory node_memory(const EnvGetter& env, const StepdFacts& stepd = {},
                       const std::string& root = "/");

}  // namespace stoker
