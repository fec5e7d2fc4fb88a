// The rank planner: a pure function from (topology, mask, ranks, GPUs, memory,
// profile, user overrides) to a Plan. No I/O: the plugin, the `stoker plan`
// command and the runtime all call it, so what an admin previews is what a job gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/enum_names.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {

enum class BindMode { GpuNuma, Even, None };
inline constexpr EnumName<BindMode> kBindModeNames[] = {
    {BindMode::GpuNuma, "gpu-numa"}, {BindMode::Even, "even"}, {BindMode::None, "none"}};
inline const char* to_string(BindMode b) {
  return name_of(kBindModeNames, b);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<BindMode> parse_bind_mode(std::string_view s) {
  return value_named(kBindModeNames, s);
}

// What a user asked for (flags or options). Unset = decided by the profile.
struct UserOverrides {
  std::optional<int> workers;
  std::optional<int> prefetch;  // fixes the depth: prefetch_max = prefetch = N, no growth
  BindMode bind = BindMode::GpuNuma;
  MemBind mem_bind = MemBind::Local;
  PinMode pin_memory = PinMode::Auto;
};

struct PlanInput {
  const Topology* topology = nullptr;
  CpuSet allowed;  // CPUs the rank (or the step, on this node) may use
  int local_rank = 0;
  int local_size = 1;
  // The GPU of every local rank: index into topology->gpus, -1 for none.
  // Empty means no rank has a GPU. Size local_size when given.
  std::vector<int> local_gpus;
  uint64_t mem_limit = 0;  // bytes this rank may use; 0 = unknown (fallback applied)
  Profile profile;
  Caps caps;  // the admin's caps (worker fraction, prefetch, memory share)
  UserOverrides overrides;
  uint64_t batch_bytes_hint = 0;  // bytes per batch; 0 = profile's assumption
  // Threads this rank may still create (its share of ulimit -u / the cgroup's pids.max,
  // thread_room in topology.hpp), and which limit that is; nullopt = no limit known.
  // Workers never exceed it less the loader's other threads (docs/planner.md, "Planner rules", 5).
  std::optional<uint64_t> thread_room;
  std::string thread_room_from;
  std::vector<std::string> notes;  // upstream findings to carry as reasons (field "input")
};

struct Reason {
  std::string field;  // "cpus", "workers", "prefetch", "prefetch_max", "mem_budget", "gpu", ...
  std::string text;   // one line
};

struct Plan {
  static constexpr int kVersion = 1;
  std::string profile;
  int local_rank = 0, local_size = 1;
  CpuSet cpus, main_cpus, worker_cpus;
  std::vector<int> numa;  // memory NUMA nodes (os_index)
  int workers = 1;
  // The prefetch contract, in batches for the whole rank: the ring starts at `prefetch`
  // and the loader's controller moves it within [prefetch, prefetch_max]. Equal when the
  // user fixed the depth (--stoker-prefetch=N). prefetch_max x batch_bytes <= mem_budget.
  int prefetch = limits::kDefaultPrefetch;
  int prefetch_max = limits::kDefaultPrefetch;
  uint64_t mem_budget = 0;   // bytes for prefetched batches (pinned when pin_memory)
  uint64_t batch_bytes = 0;  // the batch size the budget assumed
  bool pin_memory = false;
  bool stream = false;             // read tar shards as streams (the profile's Stream)
  uint64_t shuffle_buffer = 1000;  // samples a streaming rank holds to shuffle
  std::string gpu;                 // PCI bus id, "" for none
  std::vector<std::string> nics;
  BindMode bind = BindMode::GpuNuma;
  MemBind mem_bind = MemBind::Local;
  std::vector<Reason> reasons;

  // The reasons for `field` joined with "; ", "" when none.
  std::string reason(const std::string& field) const;
  bool operator==(const Plan&) const = default;
};

bool operator==(const Reason& a, const Reason& b);

// Never throws for bad input that a slurmstepd may see (empty mask, rank >= size,
// zero memory): it returns a safe plan whose reasons say what was wrong. See
// docs/planner.md, "Planner rules", for the rules.
Plan make_plan(const PlanInput& in);

// The planner's budget fit, its last step, also run by Loader::for_this_process once the
// real batch is known: lowers prefetch_max (and prefetch, never above it) so that
// prefetch_max + `held` batches of `batch_bytes` fit plan.mem_budget, sets
// plan.batch_bytes, and says so in the "prefetch" and "prefetch_max" reasons. Never raises
// a depth. Returns false, leaving the plan as it was, when the budget holds `held` batches
// or fewer (not even a ring of one fits; make_plan then grows the budget to one batch).
bool fit_prefetch(Plan& plan, uint64_t batch_bytes, int held = 0);

// Checks a plan input the way the CLI does before planning: throws stoker::Error
// naming the bad input (empty mask, local rank >= size, zero memory limit, ...).
void check_plan_input(const PlanInput& in);

}  // namespace stoker
