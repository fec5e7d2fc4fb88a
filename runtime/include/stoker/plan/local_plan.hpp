// The I/O shell around the pure planner, used by `stoker plan`, the loader and the
// Python module: it fills a TaskFacts from this process (or a what-if node), then calls
// plan_input and make_plan, as the plugin does from Slurm's items (task_facts.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {

// Every field is optional: unset means "this process" (environment and live machine).
struct PlanRequest {
  // What-if inputs: when any of these is set the plugin's STOKER_* plan is not used.
  std::optional<std::string> topology_xml;    // else the live machine
  std::optional<CpuSet> cpus;                 // the CPUs the local ranks share; else the
                                              // XML's allowed CPUs / the live step (observe_task)
  std::optional<std::string> gpus;            // visible GPU ids "0,1"; else the live ones
                                              // (observe_task), else every GPU of the XML
  std::optional<int> local_rank, local_size;  // else launch_ranks (launch_env.hpp)
  std::optional<uint64_t> mem_limit;          // bytes per rank; else the limit / local ranks

  // Also used when planning this process.
  std::optional<std::string> profile;        // else STOKER_PROFILE, else the DefaultProfile
  std::optional<std::string> profiles_file;  // else STOKER_PROFILES, else built-ins only
  UserOverrides overrides;
  uint64_t batch_bytes = 0;     // bytes per batch hint; 0 = the profile's assumption
  bool use_plugin_plan = true;  // take STOKER_PLAN_VERSION's plan when present
  // Ignore every STOKER_* variable: the exported plan, STOKER_PROFILE and STOKER_PROFILES
  // (`stoker plan --ignore-env`: recompute what the plugin computed for this task).
  bool ignore_env = false;

  bool what_if() const {
    return topology_xml || cpus || gpus || local_rank || local_size || mem_limit;
  }
};

struct LocalPlan {
  Plan plan;
  std::string source;  // "the STOKER_* environment" or "computed on <topology source>"
  bool from_environment = false;
  // The process was bound narrower than the plugin's plan (taskset, numactl, torchrun
  // --numa-binding): the plan was made again within its mask, which is kept (`source` says so).
  bool within_narrower_mask = false;
  std::shared_ptr<const Topology> topology;  // null when the plan came from the environment
};

// The admin's profiles file named by STOKER_PROFILES; nullopt (the built-ins) when it is
// unset or empty. The one reading of that variable (the planner, `stoker plan --list`, the
// doctor).
std::optional<std::string> profiles_file_from(const EnvGetter& env);

// The plugin's plan for this process when `env` holds one (STOKER_PLAN_VERSION), else
// nullopt. Under a launcher inside the tuned task (torchrun's agent, tuned as one task per
// node, starting LOCAL_WORLD_SIZE workers) the exported plan is the launcher's: when the
// launcher's local size (launch_ranks) is larger than STOKER_LOCAL_SIZE, this worker is
// planned here on the live machine as local rank LOCAL_RANK of LOCAL_WORLD_SIZE, with the
// exported plan's profile (and STOKER_PROFILES when set), within the CPUs the launcher's
// plan holds (STOKER_CPUS): the split srun would make with one task per worker on those
// CPUs. Its GPUs and memory are observed as for any task (observe_task). Throws stoker::Error
// naming the variable when one is garbled (read_plan, launch_ranks) or the profile is unknown.
// STOKER_* variables changed after the plugin planned (STOKER_PLAN_SEAL, STOKER_PLAN_VERSION
// among them) are read from the seal: the plugin's plan wins, and a reason and one stderr line
// name them; an empty seal is named the same way. A sealed STOKER_PLAN_VERSION other than this
// runtime's (another stoker release's plugin) gives nullopt, with one line on stderr: the
// caller computes the plan, and never misreads the variables. So does a seal made for another
// Slurm step (sealed_env): the plan was inherited from it.
std::optional<LocalPlan> plugin_plan(const EnvGetter& env);

// STOKER_* environment first (unless what-if inputs are given, or ignore_env), else
// computed. Throws stoker::Error naming the input when one is unreadable or garbled: an
// XML file, a profiles file, an unknown profile, --gpus ids not on the node, LOCAL_RANK,
// ... What-if inputs are checked strictly (FactsKind::WhatIf); live GPU ids that cannot
// be located give a CPU-only plan with the reason (FactsKind::ThisProcess).
LocalPlan plan_for_this_process(const PlanRequest& request = {});

}  // namespace stoker
