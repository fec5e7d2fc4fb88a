#include "task_plan.hpp"

#include <sstream>

#include "stoker/error.hpp"
#include "stoker/plan/gpu_identity.hpp"
#include "stoker/plan/local_plan.hpp"

namespace stoker::spank {

std::string chosen_profile(const PluginConfig& cfg, const UserOptions& opts,
                           const ProfileSet& profiles) {
  if (opts.profile) return *opts.profile;
  if (!cfg.default_profile.empty()) return cfg.default_profile;
  return profiles.caps.default_profile;
}

TaskTuning plan_task(const TaskView& task, const PluginConfig& cfg, const UserOptions& opts,
                     const ProfileSet& profiles) {
  if (!task.topology) throw Error("topology", "not loaded");
  // Submit-time checks ran against the profiles file of that moment; it may have
  // changed since, so check again rather than plan with a value over a cap.
  if (auto problem = validate_user_options(opts, profiles); !problem.empty()) {
    if (problem.starts_with("stoker: ")) problem.erase(0, 8);  // the caller adds its own
    throw Error("", problem);
  }
  TaskTuning t;
  PlanInput& in = t.input;
  in.topology = task.topology;
  in.profile = profiles.get(chosen_profile(cfg, opts, profiles));
  in.caps = profiles.caps;
  in.overrides = opts.overrides;
  in.mem_limit = task.mem_bytes;

  const GpuResolution gpus =
      resolve_gpu_ids(*task.topology, task.gpu_ids, read_nvidia_device_minors());
  if (!gpus.ok()) {
    // GPU ids not found is one of the fail-safe cases: the task runs untuned (Slurm's own
    // binding stays), so drop resolve_gpu_ids' wording for callers that plan CPU-only.
    std::string what = gpus.error;
    const std::string cpu_only = "; planning without a GPU";
    if (what.ends_with(cpu_only)) what.resize(what.size() - cpu_only.size());
    throw Error("GPUs " + task.gpu_ids, what);
  }

  if (!task.step.cpus.empty()) {
    // The planner shares the step's CPUs on this node between the local ranks.
    in.allowed = task.step.cpus;
    in.local_rank = task.local_rank;
    in.local_size = task.local_size;
    in.local_gpus = local_gpus_from_visible(gpus.gpus, task.local_size);
  } else {
    // Without the other ranks' masks, plan this rank alone inside its own mask.
    in.allowed = task.own_mask;
    in.local_rank = 0;
    in.local_size = 1;
    if (!gpus.gpus.empty()) in.local_gpus = {gpu_for_local_rank(gpus.gpus, task.local_rank)};
    in.notes.push_back("the step's CPUs on this node are unknown: planned within this task's mask");
  }
  t.plan = make_plan(in);

  t.env = plan_to_env(t.plan);
  const auto add = [&](const char* name, const std::string& value) {
    t.env.emplace_back(name, value);
  };
  add("RANK", std::to_string(task.rank));
  add("LOCAL_RANK", std::to_string(task.local_rank));
  add("WORLD_SIZE", std::to_string(task.world_size));
  add("LOCAL_WORLD_SIZE", std::to_string(task.local_size));
  add("MASTER_ADDR", master_address(task.nodelist));
  add("MASTER_PORT", std::to_string(master_port(task.job_id)));
  add("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  return t;
}

std::string describe(const TaskView& task, const TaskTuning& t, const std::string& binding) {
  const Plan& p = t.plan;
  std::ostringstream s;
  s << "stoker: rank " << task.rank << " (local " << task.local_rank << "/" << task.local_size
    << "): profile=" << p.profile << " cpus=" << p.cpus.to_string()
    << " main=" << p.main_cpus.to_string() << " workers=" << p.workers
    << " worker_cpus=" << p.worker_cpus.to_string() << " prefetch=" << p.prefetch
    << " prefetch_max=" << p.prefetch_max << " mem_budget=" << p.mem_budget
    << " pin_memory=" << (p.pin_memory ? "yes" : "no") << " gpu=" << (p.gpu.empty() ? "-" : p.gpu)
    << " bind=" << to_string(p.bind) << " mem_bind=" << to_string(p.mem_bind)
    << "; from cpus=" << t.input.allowed.to_string() << " ("
    << (task.step.source.empty() ? "this task's mask" : task.step.source)
    << ") gpus=" << (task.gpu_ids.empty() ? "-" : task.gpu_ids) << " mem=" << task.mem_bytes
    << " topology=" << task.topology->source << "; binding: " << binding << "; reasons:";
  // Slurm relays a task's output in messages of 1024 bytes and keeps a line whole only when
  // it fits one: a longer line is cut by the other tasks' lines. So the reasons continue on
  // lines of their own, each under kMaxVerboseLine bytes.
  std::string out = s.str();
  size_t line_start = 0;
  const std::string more = "\nstoker: rank " + std::to_string(task.rank) + " reasons:";
  for (const auto& r : p.reasons) {
    const std::string item = " " + r.field + ": " + r.text + ";";
    if (out.size() - line_start + item.size() > kMaxVerboseLine) {
      out += more;
      line_start = out.size() - more.size() + 1;
    }
    out += item;
  }
  return out;
}

}  // namespace stoker::spank
