// Parsing and validating the user's stoker flags (--stoker-workers=auto|N, ...)
// against the admin's profiles and caps. Shared by the SPANK plugin (submit-time
// checks) and the `stoker plan` command, so both say the same thing.
#pragma once

#include <optional>
#include <span>
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

// One flag as the user gave it, handed to its row's parser.
struct FlagArg {
  std::string_view name;   // without the leading "--"
  std::string_view value;  // "" for a switch or a missing value
  // "--stoker-workers=abc": how messages and UserOptions::given name the flag.
  std::string given() const;
  // Refuses the value: throws stoker::Error(given(), what), e.g. what = "expected on or off".
  [[noreturn]] void refuse(const std::string& what) const;
};

// One user flag, as the plugin registers it with Slurm (spank_option), as `stoker plan`
// offers the tuning ones and as the messages list it, with the parser of its value (as
// pyxis's option table pairs each row with its callback).
struct UserFlag {
  const char* name;     // without the leading "--"
  const char* arginfo;  // shown in --help; nullptr for a switch
  const char* usage;    // the line sbatch --help / srun --help show
  int has_arg;          // 0 none, 1 required, 2 optional
  // A tuning override: listed in UserOptions::given (AllowOverride=no refuses it) and
  // offered by `stoker plan` (as --stoker-NAME and --NAME).
  bool tunes;
  // Sets the value into the options; a bad value throws stoker::Error (FlagArg::refuse)
  // before anything is changed.
  void (*parse)(UserOptions& opts, const FlagArg& arg);
};

// The one table of the user's flags, in --help order. Its rows live in user_options.cpp
// beside their parsers: a new flag is one row there (plus its field, if new).
extern const std::span<const UserFlag> kUserFlags;

// Parses one flag value into `opts` with its row's parser. `flag` may be given with or
// without the leading "--". A bad value or an unknown flag throws stoker::Error naming the
// flag and value (where) and what is allowed, e.g. what() is
//   "--stoker-workers=abc: expected auto or a whole number from 1 to 1024"
// (the plugin prints it after "stoker: "), and leaves `opts` unchanged.
void set_user_option(UserOptions& opts, std::string_view flag, std::string_view value);

// Checks the parsed options against the admin's profiles and caps; throws stoker::Error
// like the above (unknown profile, a value over a cap, AllowOverride=no).
void validate_user_options(const UserOptions& opts, const ProfileSet& profiles);

}  // namespace stoker
