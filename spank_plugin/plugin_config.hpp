// The plugin's plugstack.conf arguments (key=value), parsed strictly: an unknown
// key or a bad value is an error, and the caller then disables the plugin.
//
//   optional spank_stoker.so profiles=/etc/slurm/stoker.conf enable=opt-in
//            job_log=/var/log/stoker/jobs.jsonl admin_comment=yes
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stoker/plan/tune_decision.hpp"

namespace stoker::spank {

struct PluginConfig {
  std::string profiles;         // profiles file; "" = the built-in profiles
  std::string default_profile;  // "" = the profiles file's DefaultProfile
  TunePolicy enable = TunePolicy::OptIn;
  std::string topology_xml;  // admin-provided hwloc XML; "" = discover this node
  // Where the discovered topology is cached (root-owned hwloc XML, see load_topology_cached).
  std::string topology_cache = "/run/stoker";
  bool batch_step = false;  // tune the batch script's own step too
  // Run records (record_collect.hpp): off unless job_log names the admin's log.
  std::string job_log;                              // one JSON line per rank at each step's end
  std::string record_root = "/run/stoker/records";  // root-owned; a folder per step in it
  bool admin_comment = false;  // the step's verdict into the job's AdminComment (node 0)

  // `profiles` when the plugstack names a file (profiles_or_builtins' argument).
  std::optional<std::string> profiles_file() const {
    return profiles.empty() ? std::nullopt : std::optional(profiles);
  }
};

// Parses the arguments after the plugin path. Throws stoker::Error naming the
// argument and what is allowed.
PluginConfig parse_plugin_args(const std::vector<std::string>& args);

}  // namespace stoker::spank
