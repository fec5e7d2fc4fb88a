#include "plugin_config.hpp"

#include <optional>
#include <string_view>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker::spank {

namespace {

constexpr const char* kKeys =
    "profiles, default_profile, enable, topology_xml, topology_cache, batch_step, job_log, "
    "record_root, admin_comment";

[[noreturn]] void bad_value(const std::string& arg, const std::string& allowed) {
  throw Error("plugstack argument '" + arg + "'", "bad value; allowed: " + allowed,
              "fix the line in plugstack.conf");
}

std::string non_empty(const std::string& arg, std::string_view value) {
  if (value.empty()) bad_value(arg, "a non-empty value");
  return std::string(value);
}

bool yes_no(const std::string& arg, std::string_view value) {
  const std::optional<bool> yes = values::parse_yes_no(value);
  if (!yes) bad_value(arg, "yes, no");
  return *yes;
}

}  // namespace

PluginConfig parse_plugin_args(const std::vector<std::string>& args) {
  PluginConfig cfg;
  for (const auto& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos) {
      throw Error("plugstack argument '" + arg + "'",
                  "expected key=value (keys: " + std::string(kKeys) + ")",
                  "fix the line in plugstack.conf");
    }
    const std::string key = arg.substr(0, eq);
    const std::string_view value = std::string_view(arg).substr(eq + 1);
    if (key == "profiles") {
      cfg.profiles = non_empty(arg, value);
    } else if (key == "default_profile") {
      cfg.default_profile = non_empty(arg, value);
    } else if (key == "topology_xml") {
      cfg.topology_xml = non_empty(arg, value);
    } else if (key == "topology_cache") {
      cfg.topology_cache = non_empty(arg, value);
      if (cfg.topology_cache.front() != '/') bad_value(arg, "an absolute folder path");
    } else if (key == "enable") {
      const std::optional<TunePolicy> policy = parse_tune_policy(value);
      if (!policy) bad_value(arg, names_of(kTunePolicyNames, ", "));
      cfg.enable = *policy;
    } else if (key == "batch_step") {
      cfg.batch_step = yes_no(arg, value);
    } else if (key == "job_log" || key == "record_root") {
      std::string& path = key == "job_log" ? cfg.job_log : cfg.record_root;
      path = non_empty(arg, value);
      if (path.front() != '/') bad_value(arg, "an absolute path");
    } else if (key == "admin_comment") {
      cfg.admin_comment = yes_no(arg, value);
    } else {
      throw Error("plugstack argument '" + arg + "'",
                  "unknown key '" + key + "' (keys: " + std::string(kKeys) + ")",
                  "fix the line in plugstack.conf");
    }
  }
  return cfg;
}

}  // namespace stoker::spank
