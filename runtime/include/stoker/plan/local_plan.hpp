// The I/O shell around the pure planner, used by `stoker plan`, the loader and the
// Python module: it gathers this process's (or a what-if node's) inputs, then calls
// make_plan. The plugin does the same from Slurm's world in its own code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stoker/plan/cpuset.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/plan/topology.hpp"

namespace stoker {

// Every field is optional: unset means "this process" (environment and live machine).
struct PlanRequest {
  // What-if inputs: when any of these is set the plugin's STOKER_* plan is not used.
  std::optional<std::string> topology_xml;    // else the live machine
  std::optional<CpuSet> cpus;                 // else the XML's allowed CPUs / this process's mask
  std::optional<std::string> gpus;            // visible GPU ids "0,1"; else CUDA_VISIBLE_DEVICES
                                              // (live), else every GPU of the topology
  std::optional<int> local_rank, local_size;  // else LOCAL_RANK/LOCAL_WORLD_SIZE, SLURM_*, 0/1
  std::optional<uint64_t> mem_limit;          // bytes per rank; else the limit / local ranks

  // Also used when planning this process.
  std::optional<std::string> profile;        // else STOKER_PROFILE, else the DefaultProfile
  std::optional<std::string> profiles_file;  // else STOKER_PROFILES, else built-ins only
  UserOverrides overrides;
  uint64_t batch_bytes = 0;          // bytes per batch hint; 0 = the profile's assumption
  bool use_environment_plan = true;  // take STOKER_PLAN_VERSION's plan when present

  bool what_if() const {
    return topology_xml || cpus || gpus || local_rank || local_size || mem_limit;
  }
};

struct LocalPlan {
  Plan plan;
  std::string source;  // "the STOKER_* environment" or "computed on <topology source>"
  bool from_environment = false;
  std::shared_ptr<const Topology> topology;  // null when the plan came from the environment
};

// STOKER_* environment first (unless what-if inputs are given), else computed.
// Throws stoker::Error naming the input when one is unreadable or garbled: an XML file,
// a profiles file, an unknown profile, --gpus ids not on the node, LOCAL_RANK, ...
// What-if inputs are checked strictly (check_plan_input); CUDA_VISIBLE_DEVICES that
// cannot be resolved gives a CPU-only plan with the reason, as in the plugin.
LocalPlan plan_this_process(const PlanRequest& request = {});

// PyTorch's convention: local rank i uses visible[i % count]; the GPUs of all
// `local_size` ranks (topology indices), empty when `visible` is.
std::vector<int> local_gpus_from_visible(const std::vector<int>& visible, int local_size);

}  // namespace stoker
