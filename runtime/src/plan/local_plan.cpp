// plan_for_this_process: the runtime's filler of a TaskFacts (this process, or a what-if node),
// then the same plan_input and make_plan the plugin calls.
#include "stoker/plan/local_plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "stoker/common/launch_env.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_input.hpp"
#include "stoker/plan/profiles.hpp"

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

// Where a process planned here (not taken from the plugin) may run: CPUs shared by
// local_size local ranks, this one being local_rank.
struct Share {
  CpuSet cpus;
  std::string from;
  uint64_t local_rank = 0, local_size = 1;
  std::string ranks_from;
};

// A process planned here, as srun would plan a task of its own on `share` (plugin_plan), with
// the plugin's plan's profile.
LocalPlan plan_within(const Plan& exported, const Share& share, const EnvGetter& env,
                      const std::string& why) {
  auto topo = std::make_shared<Topology>(load_topology());
  TaskFacts w;
  w.kind = FactsKind::ThisProcess;
  w.topology = topo.get();
  observe_task(w, env);
  w.step = {share.cpus, share.from};
  w.local_rank = static_cast<int>(share.local_rank);
  w.local_size = static_cast<int>(share.local_size);
  w.ranks_from = share.ranks_from;
  w.default_profile = exported.profile;
  w.default_profile_from = "STOKER_PROFILE (the plugin's plan)";
  LocalPlan out;
  out.plan = make_plan(plan_input(w, {}, profiles_or_builtins(profiles_file_from(env))));
  out.source = "computed on " + topo->source + " for local rank " +
               std::to_string(share.local_rank) + " of " + std::to_string(share.local_size) + " " +
               why;
  out.plan.reasons.push_back({"source", out.source});
  out.topology = std::move(topo);
  return out;
}

// The rule for a process bound narrower than its plan (taskset or numactl in the step,
// torchrun --numa-binding, a site's launcher): its mask is kept, and the plan is made again
// within it, never widened back. `mask`: the process's own. Ranks a launcher bound alike share
// a mask; how many is estimated from the part of the CPUs the mask holds (8 ranks each bound
// to one of 2 NUMA nodes: 4 per mask; each to its own eighth: 1), with the launcher's local
// rank numbering them. A mask equal to the plan's main CPUs is stoker's own pin of the
// training loop, inherited by a child process: not a narrowing.
std::optional<Share> narrower_mask(const Plan& exported, const CpuSet& mask,
                                   uint64_t ranks_on_planned, uint64_t local_rank) {
  const CpuSet& planned = exported.cpus;
  if (planned.is_subset_of(mask) || mask == exported.main_cpus || mask.empty()) return std::nullopt;
  const double part = static_cast<double>((mask & planned).count()) / planned.count();
  Share s;
  s.cpus = mask;
  s.local_size = std::max<uint64_t>(1, std::llround(part * static_cast<double>(ranks_on_planned)));
  s.local_rank = local_rank % s.local_size;
  s.from = "this process's mask " + mask.to_string() + ", narrower than the plan's CPUs " +
           planned.to_string() + " (a launcher, numactl or taskset bound it): kept";
  s.ranks_from = "the local ranks estimated to share that mask";
  return s;
}

// One line on stderr, the first time only: stoker.plan() and each loader read the plan again.
void say_once(std::atomic<bool>& said, const std::string& line) {
  if (!said.exchange(true)) std::fprintf(stderr, "%s\n", line.c_str());
}
std::atomic<bool> said_version{false}, said_changed{false}, said_threads{false},
    said_other_step{false}, said_unsealed{false};

// Names `changes` made after the plugin planned in the plan's reasons and, once, on stderr:
// "<what> after the plugin planned (...)<verdict>A=1 (the plugin's 2); <then>", and `todo`.
void note_changes(Plan& plan, std::atomic<bool>& said, const std::string& what,
                  const std::string& verdict, const std::vector<std::string>& changes,
                  const std::string& then, const std::string& todo) {
  if (changes.empty()) return;
  const std::string note = what + " after the plugin planned (by a container image's " +
                           "environment or a wrapper)" + verdict + join(changes, ", ") + "; " +
                           then;
  plan.reasons.push_back({"source", note});
  say_once(said, "stoker: " + note + " (" + todo + ")");
}

}  // namespace

std::optional<std::string> profiles_file_from(const EnvGetter& env) {
  return env_nonempty(env, kProfilesVar);
}

std::optional<LocalPlan> plugin_plan(const EnvGetter& given) {
  // The seal first: it holds the version too, so an image's STOKER_PLAN_VERSION cannot turn
  // the plugin's plan off (its change is named below with the others).
  const SealedEnv sealed = sealed_env(given);
  const EnvGetter& env = sealed.env;
  if (sealed.other_step) {
    say_once(said_other_step, "stoker: " + sealed.note + ": the plan is computed in this process");
    return std::nullopt;
  }
  const std::optional<std::string> version = env("STOKER_PLAN_VERSION");
  if (version && *version != std::to_string(Plan::kVersion)) {
    say_once(said_version,
             "stoker: STOKER_PLAN_VERSION=" + *version + " is the plugin's contract; this " +
                 "runtime reads version " + std::to_string(Plan::kVersion) + ": the plan is " +
                 "computed in this process instead (install the plugin and the module of one " +
                 "stoker release)");
    return std::nullopt;
  }
  std::optional<Plan> exported = read_plan(env);
  if (!exported) return std::nullopt;
  check_env_plan(*exported);  // CPUs and NUMA nodes this machine has, a budget above 0
  const Ranks ranks = launch_ranks(env);
  // More local ranks than the plugin planned for: a launcher started them inside a task.
  // (Fewer: the environment does not say, e.g. no launcher variables; the plan stands.)
  const bool launched = ranks.local_size > static_cast<uint64_t>(exported->local_size);
  const std::optional<Share> narrowed = narrower_mask(
      *exported, task_cpu_mask(), launched ? ranks.local_size : 1, launched ? ranks.local_rank : 0);
  LocalPlan out;
  if (narrowed) {
    out = plan_within(*exported, *narrowed, env, "within " + narrowed->from);
    out.within_narrower_mask = true;
  } else if (launched) {
    out = plan_within(*exported,
                      {exported->cpus, "STOKER_CPUS (the launcher's plan)", ranks.local_rank,
                       ranks.local_size, ranks.source},
                      env,
                      "under a launcher in a task the plugin planned for " +
                          std::to_string(exported->local_size));
  } else {
    out.plan = std::move(*exported);
    out.source = "the STOKER_* environment (the Slurm plugin's plan)";
    out.from_environment = true;
  }
  // A launcher inside the task (torchrun) sets its workers' OMP_NUM_THREADS itself.
  if (!launched) {
    note_changes(out.plan, said_threads, "thread variables changed", ": ", sealed.threads_changed,
                 "torch and BLAS size their thread pools from them",
                 "leave them out of the image; stoker.plan() sets torch's count to the plan's "
                 "main CPUs");
  }
  note_changes(out.plan, said_changed, "changed", ", not used: ", sealed.changed,
               "the plugin's values stand",
               "change the plan with --stoker-* flags, and leave STOKER_* out of the image");
  if (!sealed.note.empty()) {  // an empty seal: nothing to check the values against
    out.plan.reasons.push_back({"source", sealed.note});
    say_once(said_unsealed, "stoker: " + sealed.note +
                                " (leave STOKER_PLAN_SEAL as the plugin set it; change the plan "
                                "with --stoker-* flags)");
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
