// spank_stoker: the SPANK entry points. Each callback dispatches on the context
// and catches everything: no exception ever reaches Slurm's C code.
//
// local/allocator (srun, sbatch, salloc): register the flags, check their values
//   against the admin's profiles and caps; a bad value rejects the submission.
// remote (slurmstepd): user_init loads the topology and profiles once per node and
//   step; task_init plans the task, binds it and exports the plan. Any failure there
//   leaves the task untuned with exactly one warning on its stderr, never failed.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "plugin_config.hpp"
#include "slurm_version_gate.hpp"
#include "slurm_world.hpp"
#include "spank_api.hpp"
#include "stoker/error.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/topology.hpp"
#include "task_plan.hpp"

// SPANK_PLUGIN defines these; in C++ a namespace-scope const has internal linkage,
// and Slurm would not find them, so declare them extern "C" first.
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(stoker, 1)

int slurm_spank_init(spank_t sp, int ac, char** av);
int slurm_spank_user_init(spank_t sp, int ac, char** av);
int slurm_spank_task_init(spank_t sp, int ac, char** av);
int slurm_spank_exit(spank_t sp, int ac, char** av);
}

namespace stoker::spank {
namespace {

struct State {
  bool enabled = false;  // plugstack arguments parsed
  PluginConfig cfg;
  // Remote context, per step on this node.
  TuneDecision decision;
  std::string problem;  // why this step's tasks stay untuned (warned once per task)
  std::optional<ProfileSet> profiles;
  std::optional<Topology> topology;
};

State& state() {
  static State s;
  return s;
}

// Runs a callback body; an escaping exception becomes a logged error and `on_error`.
template <typename F>
int guarded(const char* callback, int on_error, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("stoker: %s: %s", callback, e.what());
  } catch (...) {
    slurm_error("stoker: %s: unknown error", callback);
  }
  return on_error;
}

bool remote() {
  return spank_context() == S_CTX_REMOTE;
}

uint32_t item_u32(spank_t sp, spank_item_t item, uint32_t fallback) {
  uint32_t v = 0;
  return spank_get_item(sp, item, &v) == ESPANK_SUCCESS ? v : fallback;
}

uint64_t item_u64(spank_t sp, spank_item_t item) {
  uint64_t v = 0;
  return spank_get_item(sp, item, &v) == ESPANK_SUCCESS ? v : 0;
}

std::optional<std::string> task_env(spank_t sp, const std::string& name) {
  std::vector<char> buf(4096);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const spank_err_t rc = spank_getenv(sp, name.c_str(), buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE) return std::nullopt;
    buf.resize(buf.size() * 4);
  }
  return std::nullopt;
}

// The task's stderr is the job's output: messages printed here reach the user.
void to_task_stderr(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void warn_untuned(uint32_t rank, const std::string& what) {
  to_task_stderr("stoker: warning: rank " + std::to_string(rank) + ": " + what +
                 "; the task runs untuned");
}

std::vector<std::string> args_of(int ac, char** av) {
  std::vector<std::string> args;
  for (int i = 0; i < ac; ++i) args.emplace_back(av[i] ? av[i] : "");
  return args;
}

// Local/allocator: the check each flag's callback runs against the admin's profiles
// and caps. The profiles file is read once, at the first flag.
std::string check_at_submit(const UserOptions& opts) {
  State& st = state();
  static std::optional<ProfileSet> profiles;
  static bool unreadable = false;
  if (unreadable) return "";
  if (!profiles) {
    try {
      profiles = st.cfg.profiles.empty() ? builtin_profiles() : load_profiles(st.cfg.profiles);
    } catch (const Error& e) {
      // The admin's file is broken: the job must still run; its tasks will say so too.
      unreadable = true;
      slurm_error("stoker: warning: %s; --stoker flags not checked", e.what());
      return "";
    }
  }
  return validate_user_options(opts, *profiles);
}

int on_init(spank_t sp, int ac, char** av) {
  State& st = state();
  try {
    st.cfg = parse_plugin_args(args_of(ac, av));
    st.enabled = true;
    if (!remote() && st.cfg.enable != EnableMode::Never) option_state().check = check_at_submit;
  } catch (const Error& e) {
    st.enabled = false;
    slurm_error("stoker: %s; the plugin is disabled", e.what());
  }
  // Flags are registered even when disabled, so jobs that use them still run.
  if (auto problem = register_options(sp); !problem.empty()) {
    slurm_error("stoker: %s", problem.c_str());
  }
  return 0;
}

// Remote, once per node per step, as the user: decide, then load what planning needs.
int on_user_init(spank_t sp) {
  State& st = state();
  if (!st.enabled) return 0;
  const OptionState& opt = option_state();
  const uint32_t step = item_u32(sp, S_JOB_STEPID, 0);
  st.decision = should_tune(st.cfg, opt.opts, opt.any_flag, step_kind(step));
  if (!st.decision.tune) return 0;
  if (!opt.remote_error.empty()) {
    st.problem = opt.remote_error;
    return 0;
  }
  try {
    st.profiles = st.cfg.profiles.empty() ? builtin_profiles() : load_profiles(st.cfg.profiles);
    st.topology =
        st.cfg.topology_xml.empty() ? load_topology() : load_topology_xml(st.cfg.topology_xml);
  } catch (const std::exception& e) {
    st.problem = e.what();
  }
  return 0;
}

TaskView gather_task(spank_t sp, const State& st) {
  TaskView t;
  const EnvGetter env = [sp](const std::string& name) { return task_env(sp, name); };
  t.topology = &*st.topology;
  t.step = step_cpus(env);
  t.own_mask = current_cpu_mask();
  t.gpu_ids = step_gpu_ids(env);
  int local_rank = 0;
  if (spank_get_item(sp, S_TASK_ID, &local_rank) == ESPANK_SUCCESS) t.local_rank = local_rank;
  t.local_size = static_cast<int>(item_u32(sp, S_JOB_LOCAL_TASK_COUNT, 1));
  t.rank = item_u32(sp, S_TASK_GLOBAL_ID, 0);
  t.world_size = item_u32(sp, S_JOB_TOTAL_TASK_COUNT, 1);
  t.job_id = item_u32(sp, S_JOB_ID, 0);
  t.nodelist = env("SLURM_STEP_NODELIST").value_or(env("SLURM_NODELIST").value_or(""));
  const uint64_t step_mb = item_u64(sp, S_STEP_ALLOC_MEM), job_mb = item_u64(sp, S_JOB_ALLOC_MEM);
  t.mem_bytes = rank_memory_bytes(step_mb, job_mb, t.local_size,
                                  step_mb || job_mb ? 0 : memory_limit_bytes());
  return t;
}

// Remote, in the forked task, as the user, just before exec.
int on_task_init(spank_t sp) {
  State& st = state();
  if (!st.enabled) return 0;
  const bool verbose = option_state().opts.verbose;
  const uint32_t rank = item_u32(sp, S_TASK_GLOBAL_ID, 0);
  if (!st.decision.tune) {
    if (verbose)
      to_task_stderr("stoker: rank " + std::to_string(rank) +
                     ": not tuned: " + st.decision.why_not);
    return 0;
  }
  if (!st.problem.empty()) {
    warn_untuned(rank, st.problem);
    return 0;
  }
  try {
    const TaskView task = gather_task(sp, st);
    const TaskTuning t = plan_task(task, st.cfg, option_state().opts, *st.profiles);
    std::string binding = "not asked (bind=none)";
    if (t.plan.bind != BindMode::None) {
      const BindResult b =
          bind_this_process(*task.topology, t.plan.cpus, t.plan.numa, t.plan.mem_bind);
      if (task.topology->is_this_system && !b.cpus_bound) {
        warn_untuned(rank, "cannot bind to CPUs " + t.plan.cpus.to_string() + ": " + b.reason);
        return 0;
      }
      binding = b.reason.empty() ? "applied" : "skipped: " + b.reason;
    }
    for (const auto& [name, value] : t.env) {
      if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
        warn_untuned(rank, "cannot export " + name);
        return 0;
      }
    }
    if (verbose) {
      // The runtime prints its one-line per-rank summary at exit when asked.
      spank_setenv(sp, "STOKER_VERBOSE", "1", 1);
      to_task_stderr(describe(task, t, binding));
    }
  } catch (const std::exception& e) {
    warn_untuned(rank, e.what());
  }
  return 0;
}

}  // namespace
}  // namespace stoker::spank

using stoker::spank::guarded;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", 0, [&] {
    return stoker::spank::running_slurm_matches(sp) ? stoker::spank::on_init(sp, ac, av) : 0;
  });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  return guarded("user_init", 0, [&] { return stoker::spank::on_user_init(sp); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", 0, [&] { return stoker::spank::on_task_init(sp); });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  return guarded("exit", 0, [] {
    auto& st = stoker::spank::state();
    st.topology.reset();
    st.profiles.reset();
    return 0;
  });
}
