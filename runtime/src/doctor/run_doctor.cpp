// run_doctor: feeds every check the real inputs of this process.
#include <sys/resource.h>

#include <algorithm>

#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/values.hpp"
#include "stoker/doctor/doctor.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker::doctor {

namespace {

// The profile's SmtAsCores, from the same profiles the plan used; false when unknown.
bool smt_as_cores(const std::string& profile) {
  try {
    const ProfileSet set = profiles_or_builtins(profiles_file_from(process_env()));
    return set.has(profile) && set.get(profile).smt_as_cores;
  } catch (const Error&) {
    return false;  // the plan finding already reports an unreadable profiles file
  }
}

std::string python_exe(const Options& o) {
  if (!o.python_exe.empty()) return o.python_exe;
  return env_nonempty(process_env(), "PYTHON").value_or("/usr/bin/python3");
}

std::string problem(const Error& e) {
  return e.where().empty() ? e.problem() : e.where() + ": " + e.problem();
}

Finding plan_finding(const LocalPlan& lp) {
  const Plan& p = lp.plan;
  return {"plan", Severity::Ok,
          std::to_string(p.workers) + " workers on CPUs " + p.worker_cpus.to_string() +
              ", prefetch " + std::to_string(p.prefetch) + " batches, budget " +
              values::format_bytes(p.mem_budget) + ", " + std::to_string(p.local_size) +
              " local rank(s) (plan " + (lp.from_environment ? "from " : "") + lp.source + ")",
          ""};
}

}  // namespace

Report run_doctor(const Options& o) {
  Report r;
  const CpuSet mask = current_cpu_mask();
  LocalPlan lp;
  try {
    lp = plan_for_this_process();
    r.findings.push_back(plan_finding(lp));
  } catch (const Error& e) {
    // Without a plan, check against one worker per CPU but the one for the training loop.
    r.findings.push_back(
        {"plan", Severity::Error, "cannot plan: " + problem(e),
         e.todo().empty() ? "fix the input named, then run stoker plan" : e.todo()});
    lp.plan.workers = std::max(1, mask.count() - 1);
    lp.plan.mem_budget = 0;
  }
  const Plan& plan = lp.plan;

  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  r.findings.push_back(check_open_files(nofile.rlim_cur, nofile.rlim_max, plan.workers));
  r.findings.push_back(check_shm(o.shm_path, filesystem_space(o.shm_path), plan.mem_budget));
  r.findings.push_back(check_cpu_quota(cgroup_cpu_quota(), mask.count()));
  r.findings.push_back(check_memory(memory_limit_bytes(), plan.mem_budget, plan.local_size));
  if (o.dataset) r.findings.push_back(check_storage(*o.dataset));

  std::shared_ptr<const Topology> topo = lp.topology;
  if (!topo) topo = std::make_shared<const Topology>(load_topology());
  r.findings.push_back(check_smt(*topo, mask, smt_as_cores(plan.profile)));
  if (plan.gpu.empty())
    r.findings.push_back({"gpu", Severity::Ok, "the plan has no GPU for this rank", ""});
  else
    r.findings.push_back(check_gpu_locality(*topo, mask, {plan.gpu}));

  if (o.python) {
    const std::string exe = python_exe(o);
    try {
      r.findings.push_back(check_python_sources(python_module_files(exe)));
    } catch (const Error& e) {
      r.findings.push_back({"python", Severity::Error, problem(e), e.todo()});
    }
  }
  return r;
}

}  // namespace stoker::doctor
