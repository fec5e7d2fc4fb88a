// plan_this_process: the runtime's filler of a World (this process, or a what-if node),
// then the same plan_input and make_plan the plugin calls.
#include "stoker/plan/local_plan.hpp"

#include "stoker/plan/launch_env.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/world.hpp"

namespace stoker {

namespace {

// What this process sees, or (with an XML) what a rank on that node would see; the
// request's explicit inputs override either.
World world_for(const PlanRequest& req, const Topology& topo, const EnvGetter& env) {
  World w;
  w.kind = req.what_if() ? WorldKind::WhatIf : WorldKind::ThisProcess;
  w.topology = &topo;
  if (req.topology_xml) {
    w.own_mask = topo.allowed_cpus;
    w.step = {topo.allowed_cpus, "the topology's allowed CPUs"};
    w.memory = topo.total_memory;
    w.memory_from = "the topology's memory";
  } else {
    observe_task(w, env);
  }
  if (req.cpus) {
    w.own_mask = *req.cpus;
    w.step = {*req.cpus, "--cpus"};
  }
  if (req.gpus) {
    w.gpu_ids = *req.gpus;
    w.gpu_ids_from = "--gpus";
  }
  if (req.mem_limit) {
    w.memory = *req.mem_limit;
    w.memory_per_rank = true;
    w.memory_from = "--mem-limit";
  }
  if (req.local_rank || req.local_size) {
    w.local_rank = req.local_rank.value_or(0);
    w.local_size = req.local_size.value_or(1);
    w.ranks_from = "the request";
  } else {
    const LaunchRanks r = launch_ranks(env);
    w.local_rank = static_cast<int>(r.local_rank);
    w.local_size = static_cast<int>(r.local_size);
    w.ranks_from = r.source;
  }
  return w;
}

}  // namespace

LocalPlan plan_this_process(const PlanRequest& req) {
  const EnvGetter env = process_env();
  // With ignore_env, STOKER_* variables do not exist for this function.
  const EnvGetter stoker_env = [&](const std::string& name) -> std::optional<std::string> {
    return req.ignore_env ? std::nullopt : env(name);
  };
  LocalPlan out;
  if (req.use_environment_plan && !req.what_if()) {
    if (auto p = plan_from_env(stoker_env)) {
      out.plan = std::move(*p);
      out.source = "the STOKER_* environment (the Slurm plugin's plan)";
      out.from_environment = true;
      return out;
    }
  }
  auto topo = std::make_shared<Topology>(req.topology_xml ? load_topology_xml(*req.topology_xml)
                                                          : load_topology());
  out.topology = topo;
  out.source = "computed on " + topo->source;

  const auto profiles_file = req.profiles_file ? req.profiles_file : stoker_env("STOKER_PROFILES");
  const ProfileSet profiles = profiles_file ? load_profiles(*profiles_file) : builtin_profiles();
  World world = world_for(req, *topo, env);
  if (auto profile = stoker_env("STOKER_PROFILE")) {
    world.default_profile = *profile;
    world.default_profile_from = "STOKER_PROFILE";
  }
  UserOptions options;
  options.profile = req.profile;
  options.overrides = req.overrides;
  PlanInput in = plan_input(world, options, profiles);
  in.batch_bytes_hint = req.batch_bytes;
  out.plan = make_plan(in);
  return out;
}

}  // namespace stoker
