#include "stepd.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "options.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/topology.hpp"
#include "stoker/plan/world.hpp"
#include "task_export.hpp"

namespace stoker::spank {

namespace {

// What this node knows about the step, shared by its tasks.
struct NodeState {
  bool enabled = false;  // plugstack arguments parsed
  PluginConfig cfg;
  std::string flag_error;  // a flag value that failed to parse here
  TuneDecision decision;
  std::string problem;  // why this step's tasks stay untuned (warned once per task)
  std::optional<ProfileSet> profiles;
  std::optional<Topology> topology;
};

NodeState& state() {
  static NodeState s;
  return s;
}

uint32_t item_u32(spank_t sp, spank_item_t item, uint32_t fallback) {
  uint32_t v = 0;
  return spank_get_item(sp, item, &v) == ESPANK_SUCCESS ? v : fallback;
}

uint64_t item_u64(spank_t sp, spank_item_t item) {
  uint64_t v = 0;
  return spank_get_item(sp, item, &v) == ESPANK_SUCCESS ? v : 0;
}

std::optional<std::string> spank_env(spank_t sp, const std::string& name) {
  std::vector<char> buf(4096);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const spank_err_t rc = spank_getenv(sp, name.c_str(), buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE) return std::nullopt;
    buf.resize(buf.size() * 4);
  }
  return std::nullopt;
}

// The task's stderr is the job's output: messages printed here reach the user. One write
// per line, so that lines of tasks sharing the output do not interleave.
void to_task_stderr(const std::string& line) {
  const std::string text = line + "\n";
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void warn_untuned(uint32_t rank, const std::string& what) {
  to_task_stderr("stoker: warning: rank " + std::to_string(rank) + ": " + what +
                 "; the task runs untuned");
}

TaskIds task_ids(spank_t sp, const EnvGetter& env) {
  TaskIds ids;
  int local_rank = 0;
  if (spank_get_item(sp, S_TASK_ID, &local_rank) == ESPANK_SUCCESS) ids.local_rank = local_rank;
  ids.local_size = static_cast<int>(item_u32(sp, S_JOB_LOCAL_TASK_COUNT, 1));
  ids.rank = item_u32(sp, S_TASK_GLOBAL_ID, 0);
  ids.world_size = item_u32(sp, S_JOB_TOTAL_TASK_COUNT, 1);
  ids.job_id = item_u32(sp, S_JOB_ID, 0);
  ids.nodelist = env("SLURM_STEP_NODELIST").value_or(env("SLURM_NODELIST").value_or(""));
  return ids;
}

// What this task can see: Slurm's items for its place and memory, and the same facts of
// its environment that the runtime reads (observe_task).
World task_world(spank_t sp, const EnvGetter& env, const TaskIds& ids) {
  const NodeState& st = state();
  World w;
  w.kind = WorldKind::SlurmTask;
  w.topology = &*st.topology;
  observe_task(w, env, {item_u64(sp, S_STEP_ALLOC_MEM), item_u64(sp, S_JOB_ALLOC_MEM)});
  w.local_rank = ids.local_rank;
  w.local_size = ids.local_size;
  w.ranks_from = "Slurm (S_TASK_ID, S_JOB_LOCAL_TASK_COUNT)";
  w.default_profile = st.cfg.default_profile;
  w.default_profile_from = "plugstack default_profile";
  return w;
}

// Binds the task where its plan says; "" when it may not run tuned, else what was done.
std::string bind_task(const Topology& topo, const Plan& plan, uint32_t rank) {
  if (plan.bind == BindMode::None) return "not asked (bind=none)";
  const BindResult b = bind_this_process(topo, plan.cpus, plan.numa, plan.mem_bind);
  if (topo.is_this_system && !b.cpus_bound) {
    warn_untuned(rank, "cannot bind to CPUs " + plan.cpus.to_string() + ": " + b.reason);
    return "";
  }
  return b.reason.empty() ? "applied" : "skipped: " + b.reason;
}

// Plans, binds and exports one task; throws stoker::Error when it cannot be tuned.
void tune_task(spank_t sp, bool verbose) {
  const NodeState& st = state();
  const EnvGetter env = [sp](const std::string& name) { return spank_env(sp, name); };
  const TaskIds ids = task_ids(sp, env);
  const World world = task_world(sp, env, ids);
  const PlanInput input = plan_input(world, flags().opts, *st.profiles);
  const Plan plan = make_plan(input);
  const std::string binding = bind_task(*world.topology, plan, ids.rank);
  if (binding.empty()) return;
  for (const auto& [name, value] : task_env(plan, ids)) {
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      warn_untuned(ids.rank, "cannot export " + name);
      return;
    }
  }
  if (verbose) {
    // The runtime prints its one-line per-rank summary at exit when asked.
    spank_setenv(sp, "STOKER_VERBOSE", "1", 1);
    for (const std::string& line : describe(ids, world, input, plan, binding)) to_task_stderr(line);
  }
}

}  // namespace

void stepd_init(const std::optional<PluginConfig>& cfg) {
  NodeState& st = state();
  st.enabled = cfg.has_value();
  if (cfg) st.cfg = *cfg;
}

int stepd_flag(int val, const char* optarg) {
  // Checked at submit time already; a value that still fails leaves the task untuned with
  // a warning rather than failing it.
  const std::string problem = record_flag(val, optarg);
  NodeState& st = state();
  if (!problem.empty() && st.flag_error.empty()) st.flag_error = problem;
  return 0;
}

// Once per node per step, as the user: decide, then load what planning needs.
int stepd_user_init(spank_t sp) {
  NodeState& st = state();
  if (!st.enabled) return 0;
  const FlagState& f = flags();
  const uint32_t step = item_u32(sp, S_JOB_STEPID, 0);
  st.decision = should_tune(st.cfg.enable, st.cfg.batch_step, f.opts, f.any_flag, step_kind(step));
  if (!st.decision.tune) return 0;
  if (!st.flag_error.empty()) {
    st.problem = st.flag_error;
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

// In the forked task, as the user, just before exec.
int stepd_task_init(spank_t sp) {
  const NodeState& st = state();
  if (!st.enabled) return 0;
  const bool verbose = flags().opts.verbose;
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
    tune_task(sp, verbose);
  } catch (const std::exception& e) {
    warn_untuned(rank, e.what());
  }
  return 0;
}

void stepd_exit() {
  NodeState& st = state();
  st.topology.reset();
  st.profiles.reset();
}

}  // namespace stoker::spank
