#include "slurm_version.hpp"

// Slurm 21.08 moved the version macros from slurm.h into slurm_version.h.
#if __has_include(<slurm/slurm_version.h>)
#include <slurm/slurm_version.h>
#else
#include <slurm/slurm.h>
#endif

#include <cstdio>
#include <optional>
#include <string_view>

#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker::spank {

namespace {

// "22.05.8" (or "22.05", "23.11.0-0rc1") -> {22, 5}; nullopt when it does not start with
// MAJOR.MINOR.
std::optional<SlurmRelease> parse_release(std::string_view text) {
  const auto parts = split(text.substr(0, text.find('-')), '.');
  if (parts.size() < 2) return std::nullopt;
  const auto major = values::parse_whole(parts[0], 0, 9999);
  const auto minor = values::parse_whole(parts[1], 0, 99);
  if (!major || !minor) return std::nullopt;
  return SlurmRelease{static_cast<int>(*major), static_cast<int>(*minor)};
}

}  // namespace

std::string SlurmRelease::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%02d", major, minor);
  return buf;
}

SlurmRelease built_for_release() {
  return {SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER)};
}

std::string slurm_release_mismatch(const std::string& running, const SlurmRelease& built) {
  const auto r = parse_release(running);
  if (r && r->major == built.major && r->minor == built.minor) return "";
  const std::string running_text =
      running.empty() ? "a Slurm that does not say its version" : "Slurm " + running;
  return "stoker: this plugin was built for Slurm " + built.to_string() + " but " + running_text +
         " is running: it stays unloaded (jobs run untuned, --stoker flags are unknown) until " +
         "the stoker-slurm-plugin package built for " +
         (r ? "Slurm " + r->to_string() : std::string("this Slurm")) +
         " is installed, or stoker is rebuilt against its libslurm-dev";
}

}  // namespace stoker::spank
