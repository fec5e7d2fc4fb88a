// The I/O shell around the pure planner, used by `stoker plan`, the loader and the
// Python module: it fills a World from this process (or a what-if node), then calls
// plan_input and make_plan, as the plugin does from Slurm's items (world.hpp).
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
  uint64_t batch_bytes = 0;          // bytes per batch hint; 0 = the profile's assumption
  bool use_environment_plan = true;  // take STOKER_PLAN_VERSION's plan when present
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
  std::shared_ptr<const Topology> topology;  // null when the plan came from the environment
};

// STOKER_* environment first (unless what-if inputs are given, or ignore_env), else
// computed. Throws stoker::Error naming the input when one is unreadable or garbled: an
// XML file, a profiles file, an unknown profile, --gpus ids not on the node, LOCAL_RANK,
// ... What-if inputs are checked strictly (WorldKind::WhatIf); live GPU ids that cannot
// be located give a CPU-only plan with the reason (WorldKind::ThisProcess).
LocalPlan plan_this_process(const PlanRequest& request = {});

}  // namespace stoker
