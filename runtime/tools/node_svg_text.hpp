// The text lines of the node picture (node_svg.hpp): its heading and one legend line per rank.
#pragma once

#include <string>

#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::cli {

// "3 packages", "1 core".
std::string count(size_t n, const std::string& what);

// "2 packages, 8 NUMA nodes, 64 cores (128 PUs), 8 NVIDIA GPUs, 8 NICs".
std::string summary(const Topology& t);

// One rank: its CPUs, main CPUs, spilled worker CPUs (`away`, none when empty), memory
// nodes, GPU, NICs, workers, prefetch and budget.
std::string legend_line(const Plan& p, const CpuSet& away);

}  // namespace stoker::cli
