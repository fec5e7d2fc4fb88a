#include "stoker/plan/local_plan.hpp"

#include <cstdlib>

#include "common/slurm_tasks.hpp"
#include "stoker/plan/values.hpp"
#include "stoker/error.hpp"
#include "stoker/plan/gpu_identity.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// An integer environment variable, or nullopt when absent. Throws naming it when garbled.
std::optional<int> env_int(const char* name, int lo) {
  auto v = env(name);
  if (!v) return std::nullopt;
  auto n = values::parse_whole(*v, lo, 1 << 20);
  if (!n)
    throw Error(name, "garbled value '" + *v + "'",
                "expected a whole number from " + std::to_string(lo) + ", or unset it");
  return static_cast<int>(*n);
}

// Local rank and size: the request, else torchrun's names, else Slurm's, else 0 of 1.
// Slurm sets SLURM_NTASKS_PER_NODE only when asked for it; its step's task list
// (SLURM_STEP_TASKS_PER_NODE, "2(x2)") always says how many tasks share this node.
std::pair<int, int> local_ranks(const PlanRequest& r, std::string& from) {
  if (r.local_rank || r.local_size) {
    from = "the request";
    return {r.local_rank.value_or(0), r.local_size.value_or(1)};
  }
  auto checked = [&](const char* rank_name, int rk, std::string size_name, int sz) {
    from = std::string(rank_name) + "/" + size_name;
    if (rk >= sz)
      throw Error(rank_name, std::to_string(rk) + " is not below " + size_name + "=" +
                                 std::to_string(sz),
                  "fix or unset the launcher's variables");
    return std::pair<int, int>{rk, sz};
  };
  auto rank = env_int("LOCAL_RANK", 0);
  auto size = env_int("LOCAL_WORLD_SIZE", 1);
  if (rank || size) return checked("LOCAL_RANK", rank.value_or(0), "LOCAL_WORLD_SIZE", size.value_or(1));
  if (auto slurm_rank = env_int("SLURM_LOCALID", 0)) {
    if (auto n = env_int("SLURM_NTASKS_PER_NODE", 1))
      return checked("SLURM_LOCALID", *slurm_rank, "SLURM_NTASKS_PER_NODE", *n);
    for (const char* list_name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
      if (auto list = env(list_name)) {
        const int node = env_int("SLURM_NODEID", 0).value_or(0);
        const auto n = slurm_tasks_on_node(list_name, *list, static_cast<uint64_t>(node));
        return checked("SLURM_LOCALID", *slurm_rank, list_name, static_cast<int>(n));
      }
    }
    return checked("SLURM_LOCALID", *slurm_rank, "(no task count: 1)", 1);
  }
  from = "defaults (no LOCAL_RANK or SLURM_LOCALID)";
  return {0, 1};
}

}  // namespace

std::vector<int> local_gpus_from_visible(const std::vector<int>& visible, int local_size) {
  std::vector<int> out;
  if (visible.empty()) return out;
  for (int r = 0; r < local_size; ++r) out.push_back(gpu_for_local_rank(visible, r));
  return out;
}

LocalPlan plan_this_process(const PlanRequest& req) {
  LocalPlan out;
  if (req.use_environment_plan && !req.what_if()) {
    if (auto p = plan_from_process_env()) {
      out.plan = std::move(*p);
      out.source = "the STOKER_* environment (the Slurm plugin's plan)";
      out.from_environment = true;
      return out;
    }
  }
  const bool xml = req.topology_xml.has_value();
  auto topo =
      std::make_shared<Topology>(xml ? load_topology_xml(*req.topology_xml) : load_topology());
  out.topology = topo;
  out.source = "computed on " + topo->source;

  std::optional<std::string> profiles_file =
      req.profiles_file ? req.profiles_file : env("STOKER_PROFILES");
  ProfileSet profiles = profiles_file ? load_profiles(*profiles_file) : builtin_profiles();
  std::string profile =
      req.profile.value_or(env("STOKER_PROFILE").value_or(profiles.caps.default_profile));

  PlanInput in;
  in.topology = topo.get();
  in.profile = profiles.get(profile);
  in.caps = profiles.caps;
  in.overrides = req.overrides;
  in.batch_bytes_hint = req.batch_bytes;

  std::string ranks_from;
  std::tie(in.local_rank, in.local_size) = local_ranks(req, ranks_from);
  in.notes.push_back("local rank " + std::to_string(in.local_rank) + " of " +
                     std::to_string(in.local_size) + " from " + ranks_from);

  in.allowed = req.cpus ? *req.cpus : xml ? topo->allowed_cpus : task_cpu_mask();

  // GPUs visible to this rank: explicit ids are checked strictly; the environment's
  // unresolvable ids give a CPU-only plan with the reason, as in the plugin.
  std::optional<std::string> ids = req.gpus;
  bool strict = ids.has_value();
  if (!ids && !xml) ids = env("CUDA_VISIBLE_DEVICES");
  std::vector<int> visible;
  if (ids) {
    GpuResolution res = resolve_gpu_ids(
        *topo, *ids, xml ? std::map<int, std::string>{} : read_nvidia_device_minors());
    if (!res.ok() && strict) {
      // A what-if plans nothing without the GPUs asked for: drop the fallback's wording.
      std::string what = res.error;
      const std::string fallback = "; planning without a GPU";
      if (what.size() > fallback.size() && what.ends_with(fallback))
        what.resize(what.size() - fallback.size());
      throw Error("GPU ids '" + *ids + "'", what, "list GPU ids that the node has");
    }
    if (!res.ok()) in.notes.push_back("CUDA_VISIBLE_DEVICES: " + res.error);
    visible = res.gpus;
  } else {
    for (size_t g = 0; g < topo->gpus.size(); ++g) visible.push_back(static_cast<int>(g));
  }
  if (in.local_size >= 1) in.local_gpus = local_gpus_from_visible(visible, in.local_size);

  if (req.mem_limit) {
    in.mem_limit = *req.mem_limit;
  } else {
    uint64_t limit = xml ? topo->total_memory : memory_limit_bytes();
    in.mem_limit = limit / static_cast<uint64_t>(std::max(1, in.local_size));
    in.notes.push_back(
        std::string(xml ? "the topology's memory " : "this process's memory limit ") +
        values::format_bytes(limit) + " / " + std::to_string(in.local_size) + " local rank(s)");
  }
  if (req.what_if()) check_plan_input(in);
  out.plan = make_plan(in);
  return out;
}

}  // namespace stoker
