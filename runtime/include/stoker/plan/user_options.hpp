// Parsing and validating the user's stoker flags (--stoker-workers=auto|N, ...)
// against the admin's profiles and caps. Shared by the SPANK plugin (submit-time
// checks) and the `stoker plan` command, so both say the same thing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker {

// The user's request, the flag --stoker[=on|off]: nothing said, on, or off (tune_decision.hpp
// weighs it against the admin's TunePolicy).
enum class TuneRequest { Default, On, Off };

struct UserOptions {
  TuneRequest enable = TuneRequest::Default;
  std::optional<std::string> profile;
  UserOverrides overrides;
  bool verbose = false;
  // The tuning flags given, as "--stoker-workers=4", in order (AllowOverride=no
  // rejects the first; --stoker, --stoker-profile and --stoker-verbose are not listed).
  std::vector<std::string> given;
};

// One user flag, as the plugin registers it with Slurm (spank_option) and as the
// messages list it. The one table of them is kUserFlags.
struct UserFlag {
  const char* name;     // without the leading "--"
  const char* arginfo;  // shown in --help; nullptr for a switch
  const char* usage;    // the line sbatch --help / srun --help show
  int has_arg;          // 0 none, 1 required, 2 optional
};

inline constexpr UserFlag kUserFlags[] = {
    {"stoker", "on|off", "Tune this job's input pipeline with stoker (default: the admin's choice)",
     2},
    {"stoker-profile", "NAME", "stoker profile from the admin's list (stoker plan --list)", 1},
    {"stoker-workers", "auto|N", "Loader workers per rank", 1},
    {"stoker-prefetch", "auto|N", "Batches in flight per rank", 1},
    {"stoker-bind", "gpu-numa|even|none", "How each rank's CPUs are chosen and bound", 1},
    {"stoker-mem-bind", "local|strict|none",
     "Rank memory on its NUMA node(s): preferred, only there, or unbound", 1},
    {"stoker-pin-memory", "auto|yes|no", "Pinned host memory for batches", 1},
    {"stoker-verbose", nullptr, "Print each rank's stoker plan and reasons on stderr", 0},
};

// Each call parses one flag value into `opts`. `flag` may be given with or without
// the leading "--". On a bad value it returns one line the plugin prints verbatim,
// naming the flag, the value and what is allowed, e.g.
//   "stoker: --stoker-workers=abc: expected auto or a whole number from 1 to 1024"
// and leaves `opts` unchanged. Returns "" on success.
std::string set_user_option(UserOptions& opts, std::string_view flag, std::string_view value);

// A line of set_user_option or validate_user_options as a stoker::Error, for callers that
// throw rather than print (stoker::Error's printers add their own "stoker: ").
Error user_option_error(const std::string& problem);

// Checks the parsed options against the admin's profiles and caps; "" when fine,
// else one line like the above (unknown profile, a value over a cap, AllowOverride=no).
std::string validate_user_options(const UserOptions& opts, const ProfileSet& profiles);

}  // namespace stoker
