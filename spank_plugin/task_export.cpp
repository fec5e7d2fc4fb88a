#include "task_export.hpp"

#include <sstream>

#include "rendezvous.hpp"

namespace stoker::spank {

EnvVars task_env(const Plan& plan, const TaskIds& ids) {
  EnvVars env = plan_to_env(plan);
  const auto add = [&](const char* name, const std::string& value) {
    env.emplace_back(name, value);
  };
  add("RANK", std::to_string(ids.rank));
  add("LOCAL_RANK", std::to_string(ids.local_rank));
  add("WORLD_SIZE", std::to_string(ids.world_size));
  add("LOCAL_WORLD_SIZE", std::to_string(ids.local_size));
  add("MASTER_ADDR", master_address(ids.nodelist));
  add("MASTER_PORT", std::to_string(master_port(ids.job_id)));
  add("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  return env;
}

std::vector<std::string> describe(const TaskIds& ids, const World& world, const PlanInput& input,
                                  const Plan& p, const std::string& binding) {
  std::ostringstream s;
  s << "stoker: rank " << ids.rank << " (local " << ids.local_rank << "/" << ids.local_size
    << "): profile=" << p.profile << " cpus=" << p.cpus.to_string()
    << " main=" << p.main_cpus.to_string() << " workers=" << p.workers
    << " worker_cpus=" << p.worker_cpus.to_string() << " prefetch=" << p.prefetch
    << " prefetch_max=" << p.prefetch_max
    << " mem_budget=" << p.mem_budget << " pin_memory=" << (p.pin_memory ? "yes" : "no")
    << " gpu=" << (p.gpu.empty() ? "-" : p.gpu) << " bind=" << to_string(p.bind)
    << " mem_bind=" << to_string(p.mem_bind) << "; from cpus=" << input.allowed.to_string() << " ("
    << (world.step.source.empty() ? "this task's mask" : world.step.source)
    << ") gpus=" << (world.gpu_ids.value_or("").empty() ? "-" : *world.gpu_ids)
    << " mem=" << input.mem_limit << " topology=" << world.topology->source
    << "; binding: " << binding << "; reasons:";
  std::vector<std::string> lines{s.str()};
  const std::string more = "stoker: rank " + std::to_string(ids.rank) + " (more reasons):";
  for (const auto& r : p.reasons) {
    if (r.field == "input") continue;
    std::string item = " " + r.field + ": " + r.text + ";";
    if (lines.back().size() + item.size() > kMaxLine) lines.push_back(more);
    lines.back() += item.substr(0, kMaxLine - more.size());
  }
  return lines;
}

}  // namespace stoker::spank
