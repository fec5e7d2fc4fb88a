// Checks of the CPU mask against the machine: SMT siblings, and GPUs far from every
// allowed core.
#include <algorithm>

#include "stoker/common/strings.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {

namespace {

std::string numa_text(const std::vector<int>& numa) {
  return numa.empty() ? "?" : join_numbers(numa, ", ");
}

}  // namespace

Finding check_smt(const Topology& topo, const CpuSet& mask, bool smt_as_cores) {
  int cores = 0, shared = 0;
  for (const Core& c : topo.cores) {
    int in_mask = (c.pus & mask).count();
    cores += in_mask > 0;
    shared += in_mask > 1;
  }
  Finding f{"smt", Severity::Ok, "", ""};
  const std::string counts = std::to_string(mask.count()) + " CPUs of the mask are " +
                             std::to_string(cores) + " physical cores";
  if (shared == 0) {
    f.message = counts + ": no SMT siblings share a core";
    return f;
  }
  f.severity = Severity::Info;
  f.message = counts + ", " + std::to_string(shared) + " of them with several SMT threads; ";
  if (smt_as_cores) {
    f.message +=
        "the profile counts every thread as a core (SmtAsCores=yes), so two workers "
        "may share one core's decode units";
    f.fix = "for decode-heavy pipelines use a profile with SmtAsCores=no";
  } else {
    f.message +=
        "the plan counts a core's threads as one core (SmtAsCores=no): workers are "
        "sized by physical cores";
  }
  return f;
}

Finding check_gpu_locality(const Topology& topo, const CpuSet& mask,
                           const std::vector<std::string>& gpus) {
  std::vector<std::string> far, near;
  for (const Gpu& g : topo.gpus) {
    if (!gpus.empty() && std::find(gpus.begin(), gpus.end(), g.pci_bus_id) == gpus.end()) continue;
    // No local CPUs known (a memory-only node, a flat XML): nothing to compare.
    if (g.local_cpus.empty()) continue;
    (g.local_cpus.intersects(mask) ? near : far)
        .push_back(g.pci_bus_id + " (NUMA " + numa_text(g.numa) + ", CPUs " +
                   g.local_cpus.to_string() + ")");
  }
  Finding f{"gpu", Severity::Ok, "", ""};
  if (far.empty()) {
    f.message = near.empty() ? "no GPU to check"
                             : "every GPU has allowed CPUs near it: " + join(near, ", ");
    return f;
  }
  f.severity = Severity::Warn;
  f.message = "no allowed CPU (" + mask.to_string() + ") is near GPU " + join(far, ", ") +
              ": its batches and copies cross the socket link";
  f.fix =
      "ask for cores next to the GPUs (sbatch --gres-flags=enforce-binding, "
      "--cpus-per-gpu; the admin's gres.conf Cores=) and keep --stoker-bind=gpu-numa";
  return f;
}

}  // namespace stoker::doctor
