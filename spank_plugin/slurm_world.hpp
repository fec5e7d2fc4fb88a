// Decoding what Slurm tells a task (environment variables, items) into plain
// values: the step's CPUs on this node, the step's GPU ids, the first node of a
// node list, the rendezvous port. No planning here; no spank.h either, so these
// are unit-tested without Slurm.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "plugin_config.hpp"
#include "stoker/plan/cpuset.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::spank {

// Reads one variable of the task's environment; nullopt when unset.
using EnvGetter = std::function<std::optional<std::string>(const std::string&)>;

// The union of the local tasks' masks from SLURM_CPU_BIND_TYPE/_LIST
// ("mask_cpu:" + "0x3,0xC" or "map_cpu:" + "0,1"). Empty when Slurm did not bind
// (type none or absent) or the list is malformed.
CpuSet cpu_bind_union(std::string_view type, std::string_view list);

// The CPUs of this process's cgroup cpuset (v2 cpuset.cpus.effective, else v1
// cpuset.effective_cpus / cpuset.cpus). Empty when there is none. `root` lets
// tests point at a fake tree holding proc/self/cgroup and sys/fs/cgroup.
CpuSet cgroup_cpuset(const std::string& root = "/");

struct StepCpus {
  CpuSet cpus;         // the step's CPUs on this node; empty when unknown
  std::string source;  // where they came from, for the verbose line
};
// The step's CPUs on this node: the union of the local tasks' Slurm masks,
// narrowed to the cgroup cpuset when there is one; else the cgroup cpuset alone.
StepCpus step_cpus(const EnvGetter& env, const std::string& cgroup_root = "/");

// The step's GPU ids on this node as Slurm numbers them (device minors): SLURM_STEP_GPUS,
// else SLURM_JOB_GPUS (batch step), else CUDA_VISIBLE_DEVICES. "" = no GPUs.
std::string step_gpu_ids(const EnvGetter& env);

// The first host of a Slurm host list: "gpu[07-09,12],login1" -> "gpu07".
std::string first_host(std::string_view nodelist);

// The address rank 0 listens on: the step's first node when its name resolves,
// else (emulated nodes, which share this host) this host's name.
std::string master_address(std::string_view nodelist);

// A rendezvous port derived from the job id, in the unprivileged range 20000-39999,
// so that all ranks of a job agree without talking.
int master_port(uint32_t job_id);

// Step kinds as Slurm numbers them (slurm.h).
enum class StepKind { Normal, Batch, Interactive, Extern };
StepKind step_kind(uint32_t step_id);

// Whether this step's tasks are tuned, with the reason when not.
struct TuneDecision {
  bool tune = false;
  std::string why_not;
};
TuneDecision should_tune(const PluginConfig& cfg, const UserOptions& opts, bool any_flag,
                         StepKind kind);

// The memory one local rank may use: the step's (else the job's) allocation on this
// node in MB shared by the local ranks; `fallback` bytes (cgroup/physical) when Slurm
// gave none.
uint64_t rank_memory_bytes(uint64_t step_mb, uint64_t job_mb, int local_size, uint64_t fallback);

}  // namespace stoker::spank
