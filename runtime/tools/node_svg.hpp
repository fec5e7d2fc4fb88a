// A picture of one node, as SVG written by hand (no lstopo): each package and NUMA node with
// its cores, the GPUs and NICs under the NUMA node they attach to, and, for a plan, each
// rank's cores, GPU and NICs in one colour per rank, with a legend line naming every rank.
#pragma once

#include <string>
#include <vector>

#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::cli {

// `name` heads the picture (the XML file's name, "this machine"); `plans` are the node's
// ranks, empty for the topology alone.
std::string node_svg(const Topology& t, const std::vector<Plan>& plans, const std::string& name);

// Writes `svg` to `path`; throws stoker::Error naming the file when it cannot.
void write_svg(const std::string& path, const std::string& svg);

}  // namespace stoker::cli
