// check_plan_input: the strict check of a planner input that `stoker plan`'s what-if inputs
// pass before planning (make_plan itself never throws).
#include "stoker/common/error.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

void check_plan_input(const PlanInput& in) {
  if (!in.topology)
    throw Error("topology", "no topology given", "load one from this machine or an hwloc XML file");
  const Topology& topo = *in.topology;
  if (in.local_size < 1)
    throw Error("local size", "local size " + std::to_string(in.local_size) + " is below 1",
                "give the number of ranks on this node, 1 or more");
  if (in.local_rank < 0 || in.local_rank >= in.local_size)
    throw Error("local rank",
                "local rank " + std::to_string(in.local_rank) + " is not below the local size " +
                    std::to_string(in.local_size),
                "give a local rank from 0 to " + std::to_string(in.local_size - 1));
  const std::string node_cpus = topo.all_cpus.to_string();
  if (in.allowed.empty())
    throw Error("CPU mask", "the CPU mask is empty",
                "give CPUs of the node" + (node_cpus.empty() ? "" : " (it has " + node_cpus + ")"));
  if (!topo.all_cpus.empty() && !in.allowed.is_subset_of(topo.all_cpus))
    throw Error("CPU mask",
                "CPUs " + (in.allowed - topo.all_cpus).to_string() + " are not on this node",
                "give CPUs of the node (it has " + node_cpus + ")");
  if (in.mem_limit == 0)
    throw Error("memory limit", "the memory limit is 0", "give the bytes a rank may use, e.g. 64G");
  const int n_gpus = static_cast<int>(topo.gpus.size());
  for (size_t r = 0; r < in.local_gpus.size(); ++r) {
    int g = in.local_gpus[r];
    if (g >= n_gpus || g < -1)
      throw Error("GPU",
                  "GPU index " + std::to_string(g) + " of local rank " + std::to_string(r) +
                      " is not on this node, which has " + std::to_string(n_gpus) + " GPU(s)",
                  n_gpus ? "give GPU ids from 0 to " + std::to_string(n_gpus - 1) : "give no GPUs");
  }
  if (std::string problem = check_profile(in.profile); !problem.empty())
    throw Error("profile '" + in.profile.name + "'", problem, "fix the profile's values");
  const Caps& c = in.caps;
  if (!(c.max_worker_fraction > 0 && c.max_worker_fraction <= 1) ||
      !(c.max_mem_share > 0 && c.max_mem_share <= 1) || c.max_prefetch < 1)
    throw Error("caps", "a cap is out of range",
                "fractions are in (0,1], MaxPrefetch is 1 or more");
}

}  // namespace stoker
