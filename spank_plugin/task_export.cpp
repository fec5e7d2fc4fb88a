#include "task_export.hpp"

#include <map>
#include <sstream>

#include "rendezvous.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/plan/main_thread.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"

namespace stoker::spank {

namespace {

// The names PyTorch launchers read, for every task of a step with stoker on.
EnvVars launcher_env(const StepTask& task) {
  EnvVars env{{"RANK", std::to_string(task.rank)},
              {"LOCAL_RANK", std::to_string(task.local_rank)},
              {"WORLD_SIZE", std::to_string(task.world_size)},
              {"LOCAL_WORLD_SIZE", std::to_string(task.local_size)}};
  if (!task.master_addr.empty()) env.emplace_back("MASTER_ADDR", task.master_addr);
  env.emplace_back("MASTER_PORT", std::to_string(master_port(task.job_id, task.step_id)));
  return env;
}

// The thread pools of OpenMP, MKL and OpenBLAS (torch's intra-op threads among them) sized
// to the cores the plan leaves the training loop: more would oversubscribe the loader's.
EnvVars thread_env(const Plan& plan) {
  const std::string main = std::to_string(main_threads(plan));
  return {{"OMP_NUM_THREADS", main}, {"MKL_NUM_THREADS", main}, {"OPENBLAS_NUM_THREADS", main}};
}

// NAME -> VALUE of what kExportedVar says the plugin set earlier in this task's ancestry.
std::map<std::string, std::string> exported_before(const EnvGetter& env) {
  return split_assignments(env(kExportedVar).value_or(""), ',');
}

}  // namespace

EnvVars task_env(const Plan* plan, const StepTask& task, const EnvGetter& env,
                 const std::string& profiles_file) {
  EnvVars out;
  EnvVars optional = launcher_env(task);
  if (plan) {
    out = plan_to_env(*plan);
    if (!profiles_file.empty()) out.emplace_back(kProfilesVar, profiles_file);
    // The plan wins over an image's STOKER_*, in this step only.
    out.emplace_back(kPlanSealVar, plan_seal(out, task.job_id, task.step_id));
    out.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    for (auto& var : thread_env(*plan)) optional.push_back(std::move(var));
  }
  const std::map<std::string, std::string> before = exported_before(env);
  std::vector<std::string> exported;
  for (auto& [name, value] : optional) {
    const std::optional<std::string> now = env(name);
    const auto it = before.find(name);
    const bool users = now && (it == before.end() || it->second != *now);
    if (users) continue;
    exported.push_back(name + "=" + value);
    out.emplace_back(std::move(name), std::move(value));
  }
  out.emplace_back(kExportedVar, join(exported));
  return out;
}

std::vector<std::string> set_before_task_init(const EnvVars& exported, const EnvGetter& job,
                                              const EnvGetter& now) {
  std::vector<std::string> changed;
  for (const auto& [name, value] : exported) {
    const std::optional<std::string> was = job(name), is = now(name);
    if (is && is != was && *is != value) changed.push_back(name + "=" + *is);
  }
  return changed;
}

std::string set_before_line(const StepTask& task, const std::vector<std::string>& changed) {
  if (changed.empty() || task.local_rank != 0) return "";
  return "stoker: rank " + std::to_string(task.rank) + " (once for the node's " +
         std::to_string(task.local_size) +
         " local rank(s)): set before the plugin planned (by a container image's environment "
         "or another plugin), replaced by the plan's: " +
         join(changed, ", ");
}

std::vector<std::string> describe(const StepTask& task, const TaskFacts& facts,
                                  const PlanInput& input, const Plan& p,
                                  const std::string& binding) {
  std::ostringstream s;
  s << "stoker: rank " << task.rank << " (local " << task.local_rank << "/" << task.local_size
    << "):";
  for (const ShownField& f : show(p, PlanView::Line)) s << ' ' << f.label << '=' << f.text;
  s << "; from cpus=" << input.allowed.to_string() << " ("
    << (facts.step.source.empty() ? "this task's mask" : facts.step.source)
    << ") gpus=" << (facts.gpu_ids.value_or("").empty() ? "-" : *facts.gpu_ids)
    << " mem=" << input.mem_limit << " topology=" << facts.topology->source
    << "; binding: " << binding << "; reasons:";
  std::vector<std::string> lines{s.str()};
  const std::string more = "stoker: rank " + std::to_string(task.rank) + " (more reasons):";
  for (const auto& r : p.reasons) {
    if (r.field == "input") continue;
    std::string item = " " + r.field + ": " + r.text + ";";
    if (lines.back().size() + item.size() > kMaxLine) lines.push_back(more);
    lines.back() += item.substr(0, kMaxLine - more.size());
  }
  return lines;
}

}  // namespace stoker::spank
