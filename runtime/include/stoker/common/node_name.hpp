// This node's name, one rule for every writer that names it.
#pragma once

#include <string>

#include "stoker/common/launch_env.hpp"

namespace stoker {

// SLURMD_NODENAME (one host may run several emulated Slurm nodes), else the host name, else
// "". The metrics' node label, the run record's node, the plugin's record folder and the
// example trainer all name the node by it.
std::string node_name(const EnvGetter& env);

}  // namespace stoker
