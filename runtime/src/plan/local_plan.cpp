// plan_for_this_process: the runtime's filler of a TaskFacts (this process, or a what-if node),
// then the same plan_input and make_plan the plugin calls.
#include "stoker/plan/local_plan.hpp"

#include <atomic>
#include <cstdio>

#include "stoker/common/launch_env.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/plan_input.hpp"

namespace stoker {

namespace {

// What this process sees, or (with an XML) what a rank on that node would see; the
// request's explicit inputs override either.
TaskFacts facts_for(const PlanRequest& req, const Topology& topo, const EnvGetter& env) {
  TaskFacts w;
  w.kind = req.what_if() ? FactsKind::WhatIf : FactsKind::ThisProcess;
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
    const Ranks r = launch_ranks(env);
    w.local_rank = static_cast<int>(r.local_rank);
    w.local_size = static_cast<int>(r.local_size);
    w.ranks_from = r.source;
  }
  return w;
}

// One of the workers a launcher started inside a tuned task: planned as srun would plan a
// task of its own (plugin_plan).
LocalPlan plan_launched_worker(const Plan& launcher, const Ranks& ranks,
                               const EnvGetter& env) {
  auto topo = std::make_shared<Topology>(load_topology());
  TaskFacts w;
  w.kind = FactsKind::ThisProcess;
  w.topology = topo.get();
  observe_task(w, env);
  w.step = {launcher.cpus, "STOKER_CPUS (the launcher's plan)"};
  w.local_rank = static_cast<int>(ranks.local_rank);
  w.local_size = static_cast<int>(ranks.local_size);
  w.ranks_from = ranks.source;
  w.default_profile = launcher.profile;
  w.default_profile_from = "STOKER_PROFILE (the launcher's plan)";
  LocalPlan out;
  out.plan = make_plan(plan_input(w, {}, profiles_or_builtins(profiles_file_from(env))));
  out.source = "computed on " + topo->source + " for local rank " +
               std::to_string(ranks.local_rank) + " of " + std::to_string(ranks.local_size) +
               " under a launcher in a task the plugin planned for " +
               std::to_string(launcher.local_size);
  out.plan.reasons.push_back({"source", out.source});
  out.topology = std::move(topo);
  return out;
}

// One line on stderr, the first time only: stoker.plan() and each loader read the plan again.
void say_once(std::atomic<bool>& said, const std::string& line) {
  if (!said.exchange(true)) std::fprintf(stderr, "%s\n", line.c_str());
}
std::atomic<bool> said_version{false}, said_changed{false};

}  // namespace

std::optional<std::string> profiles_file_from(const EnvGetter& env) {
  return env_nonempty(env, "STOKER_PROFILES");
}

std::optional<LocalPlan> plugin_plan(const EnvGetter& given) {
  const std::optional<std::string> version = given("STOKER_PLAN_VERSION");
  if (version && *version != std::to_string(Plan::kVersion)) {
    say_once(said_version, "stoker: STOKER_PLAN_VERSION=" + *version + " is the plugin's contract; this " +
             "runtime reads version " + std::to_string(Plan::kVersion) + ": the plan is " +
             "computed in this process instead (install the plugin and the module of one " +
             "stoker release)");
    return std::nullopt;
  }
  const SealedEnv sealed = sealed_env(given);
  const EnvGetter& env = sealed.env;
  std::optional<Plan> exported = read_plan(env);
  if (!exported) return std::nullopt;
  check_env_plan(*exported);  // CPUs and NUMA nodes this machine has, a budget above 0
  const Ranks ranks = launch_ranks(env);
  // More local ranks than the plugin planned for: a launcher started them inside a task.
  // (Fewer: the environment does not say, e.g. no launcher variables; the plan stands.)
  LocalPlan out;
  if (ranks.local_size > static_cast<uint64_t>(exported->local_size)) {
    out = plan_launched_worker(*exported, ranks, env);
  } else {
    out.plan = std::move(*exported);
    out.source = "the STOKER_* environment (the Slurm plugin's plan)";
    out.from_environment = true;
  }
  if (!sealed.changed.empty()) {
    const std::string note = "changed after the plugin planned (by a container image's "
                             "environment or a wrapper), not used: " +
                             join(sealed.changed, ", ") + "; the plugin's values stand";
    out.plan.reasons.push_back({"source", note});
    say_once(said_changed, "stoker: " + note + " (change the plan with --stoker-* flags, and leave STOKER_* " +
             "out of the image)");
  }
  return out;
}

LocalPlan plan_for_this_process(const PlanRequest& req) {
  const EnvGetter env = process_env();
  // With ignore_env, STOKER_* variables do not exist for this function.
  const EnvGetter stoker_env = [&](const std::string& name) -> std::optional<std::string> {
    return req.ignore_env ? std::nullopt : env(name);
  };
  if (req.use_plugin_plan && !req.what_if()) {
    if (auto p = plugin_plan(stoker_env)) return std::move(*p);
  }
  LocalPlan out;
  auto topo = std::make_shared<Topology>(req.topology_xml ? load_topology_xml(*req.topology_xml)
                                                          : load_topology());
  out.topology = topo;
  out.source = "computed on " + topo->source;

  const auto profiles_file = req.profiles_file ? req.profiles_file : profiles_file_from(stoker_env);
  const ProfileSet profiles = profiles_or_builtins(profiles_file);
  TaskFacts facts = facts_for(req, *topo, env);
  if (auto profile = stoker_env("STOKER_PROFILE")) {
    facts.default_profile = *profile;
    facts.default_profile_from = "STOKER_PROFILE";
  }
  UserOptions options;
  options.profile = req.profile;
  options.overrides = req.overrides;
  PlanInput in = plan_input(facts, options, profiles);
  in.batch_bytes_hint = req.batch_bytes;
  out.plan = make_plan(in);
  return out;
}

}  // namespace stoker
