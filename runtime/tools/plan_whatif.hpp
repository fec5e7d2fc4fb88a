// `stoker plan` for whole nodes: every rank (or one) of every node type given with
// --topology, as one table row per node type and rank (--json: the same rows), and with
// --svg a picture of each node's plan.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stoker/plan/local_plan.hpp"

namespace stoker::cli {

struct WhatIf {
  std::vector<std::string> topologies;  // hwloc XML files; empty: this machine
  std::optional<int> local_rank;        // that rank on every node, else all of them
  int local_size = 1;
  std::string svg;  // picture file ("" for none); with several topologies, one per node
  bool json = false;
};

// True when the plan command asks for this form rather than one rank's plan: several
// topologies, a picture, or a node size without a rank.
bool wants_whole_nodes(size_t topologies, bool svg, bool size_given, bool rank_given);

// Plans with `base` (profile, overrides, memory, ...) for each node and rank, and prints.
// Throws stoker::Error naming the input that cannot be planned.
void run_whatif(const WhatIf& w, const PlanRequest& base);

// The picture file for node `index` of `count`: `file` itself for one node, else with the
// topology's file name before the extension ("plan.svg" -> "plan-nvidiaDGX2.svg").
std::string svg_path_for(const std::string& file, const std::string& topology, size_t count);

}  // namespace stoker::cli
