#include "stoker/plan/main_thread.hpp"

#include <algorithm>

#include "stoker/topology/topology.hpp"
#include "topology/process_hwloc.hpp"

namespace stoker {

namespace {

MainThreadPin not_pinned(const std::string& why) {
  return {false, {}, "main thread not pinned: " + why};
}

MainThreadPin pin(const Plan& plan) {
  if (plan.main_cpus.empty()) return not_pinned("the plan names no main CPUs");
  // Within the thread's own mask: an outside binding (taskset, numactl) that narrowed it is
  // kept, and a second loader or plan() finds it already on the main CPUs.
  const CpuSet granted = current_cpu_mask();
  const CpuSet target = plan.main_cpus & granted;
  if (target.empty()) {
    return not_pinned("the plan's main CPUs " + plan.main_cpus.to_string() +
                      " are not among the CPUs this thread may use (" + granted.to_string() + ")");
  }
  std::string why;
  remember_task_mask(granted);
  if (!bind_this_thread(target, &why)) return not_pinned(why);
  if (target == plan.main_cpus)
    return {true, target, "main thread pinned to CPUs " + target.to_string() + " (main_cpus)"};
  return {true, target,
          "main thread pinned to CPUs " + target.to_string() + ", the part of the plan's main " +
              "CPUs " + plan.main_cpus.to_string() + " this thread may use (" +
              granted.to_string() + ")"};
}

}  // namespace

MainThreadPin pin_main_thread(Plan& plan) {
  MainThreadPin p;
  try {
    p = pin(plan);
  } catch (const std::exception& e) {  // the mask unreadable: never fail the job for it
    p = not_pinned(e.what());
  }
  plan.reasons.push_back({"main_thread", p.note});
  return p;
}

int main_threads(const Plan& plan) {
  return std::max(1, plan.main_cpus.count());
}

}  // namespace stoker
