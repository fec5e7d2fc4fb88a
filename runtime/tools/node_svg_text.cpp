#include "node_svg_text.hpp"

#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker::cli {

std::string legend_line(const Plan& p, const CpuSet& away) {
  return "rank " + std::to_string(p.local_rank) + ": cpus " +
         (p.cpus.empty() ? "-" : p.cpus.to_string()) + " (main " +
         (p.main_cpus.empty() ? "-" : p.main_cpus.to_string()) +
         (away.empty() ? "" : ", spilled " + away.to_string()) + "), NUMA " +
         (p.numa.empty() ? "-" : join_numbers(p.numa)) + ", GPU " +
         (p.gpu.empty() ? "none" : p.gpu) + ", NIC " +
         (p.nics.empty() ? "none" : join(p.nics, ", ")) + "  |  " + std::to_string(p.workers) +
         (p.workers == 1 ? " worker" : " workers") + ", prefetch " + std::to_string(p.prefetch) +
         ", budget " + values::format_bytes(p.mem_budget);
}

std::string count(size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string summary(const Topology& t) {
  return count(t.packages.size(), "package") + ", " + count(t.numa_nodes.size(), "NUMA node") +
         ", " + count(t.cores.size(), "core") + " (" +
         count(static_cast<size_t>(t.all_cpus.count()), "PU") + "), " +
         count(t.gpus.size(), "NVIDIA GPU") + ", " + count(t.nics.size(), "NIC");
}

}  // namespace stoker::cli
