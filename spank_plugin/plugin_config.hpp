// The plugin's plugstack.conf arguments (key=value), parsed strictly: an unknown
// key or a bad value is an error, and the caller then disables the plugin.
//
//   optional spank_stoker.so profiles=/etc/slurm/stoker.conf enable=opt-in
#pragma once

#include <string>
#include <vector>

#include "stoker/plan/world.hpp"

namespace stoker::spank {

struct PluginConfig {
  std::string profiles;         // profiles file; "" = the built-in profiles
  std::string default_profile;  // "" = the profiles file's DefaultProfile
  EnableMode enable = EnableMode::OptIn;
  std::string topology_xml;  // admin-provided hwloc XML; "" = discover this node
  bool batch_step = false;   // tune the batch script's own step too
};

// Parses the arguments after the plugin path. Throws stoker::Error naming the
// argument and what is allowed.
PluginConfig parse_plugin_args(const std::vector<std::string>& args);

}  // namespace stoker::spank
