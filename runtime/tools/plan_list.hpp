// `stoker plan --list`: the admin's profiles and caps, where they came from, and which
// built-ins the file overrides. The text form is itself a profiles file that parses back to
// the same set; --json gives the same data.
#pragma once

#include <optional>
#include <string>

namespace stoker::cli {

// The plugstack file Debian's /etc/slurm/plugstack.conf includes for stoker.
inline constexpr const char* kDefaultPlugstack = "/etc/slurm/plugstack.conf.d/stoker.conf";

struct ProfilesSource {
  std::string file;  // "" = the built-in profiles alone
  std::string why;   // how it was chosen, one line
};

// The profiles file the plugin uses: `flag` (--profiles) when given, else STOKER_PROFILES,
// else the profiles= argument of the plugin's active line in `plugstack`, else none.
ProfilesSource find_profiles_file(const std::optional<std::string>& flag,
                                  const std::string& plugstack);

// Prints the listing (or one JSON object). Throws stoker::Error when the file does not parse.
void list_profiles(const ProfilesSource& source, bool json);

}  // namespace stoker::cli
