// TaskFacts -> PlanInput: the one place where profile choice, GPU mapping, the memory split and
// every fallback are decided, for the plugin and the runtime alike.
#include <algorithm>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/plan_input.hpp"
#include "stoker/topology/gpu_identity.hpp"

namespace stoker {

namespace {

std::string gpu_ids_where(const TaskFacts& w) {
  std::string where = "GPU ids '" + w.gpu_ids.value_or("") + "'";
  return w.gpu_ids_from.empty() ? where : where + " (" + w.gpu_ids_from + ")";
}

// The GPUs the step sees on this node (topology indices, in the order of the id list).
std::vector<int> visible_gpus(const TaskFacts& w, std::vector<std::string>& notes) {
  const Topology& topo = *w.topology;
  std::vector<int> visible;
  if (!w.gpu_ids) {
    for (size_t g = 0; g < topo.gpus.size(); ++g) visible.push_back(static_cast<int>(g));
    return visible;
  }
  const GpuResolution res = resolve_gpu_ids(topo, *w.gpu_ids, w.gpu_minors);
  if (res.ok()) return res.gpus;
  switch (w.kind) {
    case FactsKind::ThisProcess:
      // The runtime does not move the process: a plan without the GPU still sizes the loader.
      notes.push_back(gpu_ids_where(w) + ": " + res.error + "; planning without a GPU");
      return {};
    case FactsKind::SlurmTask:
      // The plugin would bind the task away from its GPU: Slurm's own binding is better,
      // so the task stays untuned.
      throw Error(gpu_ids_where(w), res.error);
    case FactsKind::WhatIf:
      break;
  }
  throw Error(gpu_ids_where(w), res.error, "list GPU ids that the node has");
}

// PyTorch's convention: local rank i uses visible[i % count].
std::vector<int> local_gpus_from_visible(const std::vector<int>& visible, int local_size) {
  std::vector<int> out;
  if (visible.empty()) return out;
  for (int r = 0; r < local_size; ++r) out.push_back(gpu_for_local_rank(visible, r));
  return out;
}

uint64_t rank_memory(const TaskFacts& w, std::vector<std::string>& notes) {
  const std::string from = w.memory_from.empty() ? "" : " (" + w.memory_from + ")";
  if (w.memory_per_rank) {
    notes.push_back("memory per rank " + values::format_bytes(w.memory) + from);
    return w.memory;
  }
  const int ranks = std::max(1, w.local_size);
  notes.push_back("memory " + values::format_bytes(w.memory) + from + " / " +
                  std::to_string(ranks) + " local rank(s)");
  return w.memory / static_cast<uint64_t>(ranks);
}

}  // namespace

std::string chosen_profile(const TaskFacts& facts, const UserOptions& options,
                           const ProfileSet& profiles) {
  if (options.profile) return *options.profile;
  if (facts.default_profile.empty()) return profiles.caps.default_profile;
  if (!profiles.has(facts.default_profile)) {
    throw Error(facts.default_profile_from.empty() ? "profile" : facts.default_profile_from,
                "unknown profile '" + facts.default_profile + "'",
                "known profiles: " + profiles.names());
  }
  return facts.default_profile;
}

PlanInput plan_input(const TaskFacts& w, const UserOptions& options, const ProfileSet& profiles) {
  if (!w.topology) throw Error("topology", "not loaded");
  // The profiles may have changed since the options were checked at submit time.
  validate_user_options(options, profiles);
  PlanInput in;
  in.topology = w.topology;
  in.profile = profiles.get(chosen_profile(w, options, profiles));
  in.caps = profiles.caps;
  in.overrides = options.overrides;
  const std::vector<int> visible = visible_gpus(w, in.notes);
  in.notes.push_back("local rank " + std::to_string(w.local_rank) + " of " +
                     std::to_string(w.local_size) +
                     (w.ranks_from.empty() ? "" : " (" + w.ranks_from + ")"));
  if (!w.step.cpus.empty()) {
    in.allowed = w.step.cpus;
    in.local_rank = w.local_rank;
    in.local_size = w.local_size;
    if (w.local_size >= 1) in.local_gpus = local_gpus_from_visible(visible, w.local_size);
    in.notes.push_back("CPUs " + w.step.cpus.to_string() + " shared by the local ranks (" +
                       w.step.source + ")");
  } else {
    // See plan_input's comment in plan_input.hpp: alone within its own mask.
    in.allowed = w.own_mask;
    if (!visible.empty()) in.local_gpus = {gpu_for_local_rank(visible, w.local_rank)};
    in.notes.push_back(
        "the step's CPUs on this node are unknown: planned alone within this "
        "task's mask " +
        w.own_mask.to_string());
  }
  in.mem_limit = rank_memory(w, in.notes);
  if (w.thread_room) {
    in.thread_room = *w.thread_room / static_cast<uint64_t>(std::max(1, w.local_size));
    in.thread_room_from =
        w.thread_room_from +
        (w.local_size > 1 ? ", shared by " + std::to_string(w.local_size) + " local ranks" : "");
  }
  if (w.kind == FactsKind::WhatIf) check_plan_input(in);
  return in;
}

}  // namespace stoker
