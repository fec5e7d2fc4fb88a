#include "stepd.hpp"

#include <slurm/slurm.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"
#include "rendezvous.hpp"
#include "stepd_records.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_input.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/task_facts.hpp"
#include "stoker/plan/tune_decision.hpp"
#include "stoker/topology/topology.hpp"
#include "task_export.hpp"

namespace stoker::spank {

namespace {

// What this node knows about the step, shared by its tasks.
struct NodeState {
  bool enabled = false;  // plugstack arguments parsed
  PluginConfig cfg;
  std::string flag_error;  // a flag value that failed to parse here
  TuneDecision decision;
  std::string problem;      // why this step's tasks stay untuned (warned once per task)
  std::string master_addr;  // the step's rendezvous address (rendezvous.hpp)
  std::optional<ProfileSet> profiles;
  std::optional<Topology> topology;
  std::string topology_from;  // where the topology came from, for the verbose line
  double setup_ms = 0;        // the node's share of the step: decide and load (init_post_opt)
  // Read at user_init, before any plugin's task_init (pyxis's joins a container's namespaces
  // and copies the image's environment in): the step's environment and cgroup cpuset.
  std::optional<EnvGetter> job_env;  // env_from the copy; nullopt when it could not be read
  CpuSet stepd_cgroup;
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

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", ms);
  return text;
}

// The topology the step's tasks are planned on: the admin's XML, else this node's through
// the cache. A step without GPUs on this node needs no PCI discovery: its ranks get no GPU,
// and the planner picks NICs only for ranks with one.
Topology step_topology(spank_t sp, const PluginConfig& cfg, std::string* from) {
  // hwloc's plugins stay out of slurmstepd as out of every stoker process (one dlopen each
  // per step, and the GPU drivers' plugins would initialise them): init_hwloc_topology.
  if (!cfg.topology_xml.empty()) {
    *from = "plugstack topology_xml";
    return load_topology_xml(cfg.topology_xml);
  }
  const EnvGetter env = [sp](const std::string& name) { return spank_env(sp, name); };
  const bool with_io = step_gpu_ids(env).has_value();
  CachedTopology c = load_topology_cached(cfg.topology_cache, with_io);
  *from = std::string(with_io ? "" : "no GPUs, no I/O devices; ") +
          (c.from_cache ? "read from " + c.path
                        : "discovered" + std::string(c.written ? ", cached in " + c.path : "") +
                              (c.note.empty() ? "" : " (" + c.note + ")"));
  return std::move(c.topology);
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

// The first node's NodeAddr, asked of slurmctld (one RPC per node and step, in init_post_opt):
// the one source every node reads alike. nullopt when Slurm does not answer.
std::optional<std::string> slurm_node_addr(const std::string& node) {
  node_info_msg_t* info = nullptr;
  std::string name = node;
  if (slurm_load_node_single(&info, name.data(), SHOW_ALL) != 0 || !info) return std::nullopt;
  std::optional<std::string> addr;
  if (info->record_count > 0 && info->node_array[0].node_addr) addr = info->node_array[0].node_addr;
  slurm_free_node_info_msg(info);
  return addr;
}

StepTask step_task(spank_t sp) {
  StepTask task;
  int local_rank = 0;
  if (spank_get_item(sp, S_TASK_ID, &local_rank) == ESPANK_SUCCESS) task.local_rank = local_rank;
  task.local_size = item_u32(sp, S_JOB_LOCAL_TASK_COUNT, 1);
  task.rank = item_u32(sp, S_TASK_GLOBAL_ID, 0);
  task.world_size = item_u32(sp, S_JOB_TOTAL_TASK_COUNT, 1);
  task.job_id = item_u32(sp, S_JOB_ID, 0);
  task.step_id = item_u32(sp, S_JOB_STEPID, 0);
  task.master_addr = state().master_addr;
  return task;
}

// What this task can see: Slurm's items for its place and memory, and the same facts of
// its environment that the runtime reads (observe_task).
TaskFacts task_facts(spank_t sp, const EnvGetter& env, const StepTask& task) {
  const NodeState& st = state();
  TaskFacts w;
  w.kind = FactsKind::SlurmTask;
  w.topology = &*st.topology;
  observe_task(w, env,
               {item_u64(sp, S_STEP_ALLOC_MEM), item_u64(sp, S_JOB_ALLOC_MEM), st.stepd_cgroup});
  w.local_rank = static_cast<int>(task.local_rank);
  w.local_size = static_cast<int>(task.local_size);
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

// Plans and binds one task; nullopt when binding failed (warned). Throws stoker::Error when
// it cannot be planned.
std::optional<Plan> tune_task(spank_t sp, const EnvGetter& env, const StepTask& task,
                              bool verbose) {
  const TaskFacts facts = task_facts(sp, env, task);
  const PlanInput input = plan_input(facts, flags().opts, *state().profiles);
  Plan plan = make_plan(input);
  const std::string binding = bind_task(*facts.topology, plan, task.rank);
  if (binding.empty()) return std::nullopt;
  if (verbose) {
    for (const std::string& line : describe(task, facts, input, plan, binding))
      to_task_stderr(line);
  }
  return plan;
}

// Exports what task_env says; a variable that cannot be set is warned about. What another
// plugin set before (an image's STOKER_WORKERS, OMP_NUM_THREADS) is named, then replaced.
void export_task_env(spank_t sp, const Plan* plan, const StepTask& task, const EnvGetter& now) {
  const NodeState& st = state();
  const EnvGetter& job = st.job_env ? *st.job_env : now;  // user_init could not read it: now
  const EnvVars vars = task_env(plan, task, job, st.cfg.profiles);
  const std::string line = set_before_line(task, set_before_task_init(vars, job, now));
  if (!line.empty()) to_task_stderr(line);
  for (const auto& [name, value] : vars) {
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      warn_untuned(task.rank, "cannot export " + name);
      return;
    }
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
  try {
    record_flag(val, optarg);
  } catch (const Error& e) {
    NodeState& st = state();
    if (st.flag_error.empty()) st.flag_error = e.what();
  }
  return 0;
}

// Once per node per step, as root (so that it may write the topology cache), after the
// flags were replayed: decide, then load what planning needs.
int stepd_init_post_opt(spank_t sp) {
  NodeState& st = state();
  if (!st.enabled) return 0;
  const Clock::time_point start = Clock::now();
  records_init(sp, st.cfg);  // every step's loaders leave a record, tuned or not
  const FlagState& f = flags();
  const uint32_t step = item_u32(sp, S_JOB_STEPID, 0);
  st.decision = should_tune(st.cfg.enable, st.cfg.batch_step, f.opts, f.any_flag, step_kind(step));
  if (!st.decision.tune) return 0;
  // The rendezvous address first: every task of the step gets it, tuned or not.
  const std::string nodes =
      spank_env(sp, "SLURM_STEP_NODELIST").value_or(spank_env(sp, "SLURM_NODELIST").value_or(""));
  st.master_addr = master_address(nodes, slurm_node_addr);
  if (!st.flag_error.empty()) {
    st.problem = st.flag_error;
    return 0;
  }
  try {
    st.profiles = profiles_or_builtins(st.cfg.profiles_file());
    st.topology = step_topology(sp, st.cfg, &st.topology_from);
  } catch (const std::exception& e) {
    st.problem = e.what();
  }
  st.setup_ms = ms_since(start);
  return 0;
}

// Once per node per step in slurmstepd, as the user, before the tasks are forked.
int stepd_user_init(spank_t sp) {
  NodeState& st = state();
  if (!st.enabled) return 0;
  char** env = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &env) == ESPANK_SUCCESS && env) {
    std::map<std::string, std::string> copy;
    for (; *env; ++env) {
      const std::string_view entry = *env;
      const size_t eq = entry.find('=');
      if (eq != std::string_view::npos) copy.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    st.job_env = env_from(std::move(copy));
  }
  st.stepd_cgroup = cgroup_cpuset();
  return 0;
}

// In the forked task, as the user, just before exec.
int stepd_task_init(spank_t sp) {
  const NodeState& st = state();
  if (!st.enabled) return 0;
  const bool verbose = flags().opts.verbose;
  const uint32_t rank = item_u32(sp, S_TASK_GLOBAL_ID, 0);
  records_export(sp);
  if (!st.decision.tune) {
    if (verbose)
      to_task_stderr("stoker: rank " + std::to_string(rank) +
                     ": not tuned: " + st.decision.why_not);
    return 0;
  }
  const EnvGetter env = [sp](const std::string& name) { return spank_env(sp, name); };
  const StepTask task = step_task(sp);
  std::optional<Plan> plan;
  const Clock::time_point start = Clock::now();
  if (!st.problem.empty()) {
    warn_untuned(rank, st.problem);
  } else {
    try {
      plan = tune_task(sp, env, task, verbose);
    } catch (const std::exception& e) {
      warn_untuned(rank, e.what());
    }
  }
  // Tuned or not, the task gets the rendezvous (a launcher's fallback would differ per node).
  export_task_env(sp, plan ? &*plan : nullptr, task, env);
  if (plan && verbose) spank_setenv(sp, kVerboseVar, "1", 1);  // the runtime's summary
  if (verbose) {
    to_task_stderr("stoker: rank " + std::to_string(rank) + ": task_init took " +
                   ms_text(ms_since(start)) + "; this node's step setup took " +
                   ms_text(st.setup_ms) + " (topology: " + st.topology_from + ")");
  }
  return 0;
}

void stepd_task_exit(spank_t sp) {
  const NodeState& st = state();
  if (st.enabled) records_task_ended(sp, st.cfg, st.decision.tune);
}

void stepd_exit(spank_t sp) {
  NodeState& st = state();
  if (st.enabled) records_collect(sp, st.cfg, st.decision.tune);
  st.topology.reset();
  st.profiles.reset();
}

}  // namespace stoker::spank
