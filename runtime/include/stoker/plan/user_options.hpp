// Parsing and validating the user's stoker flags (--stoker-workers=auto|N, ...)
// against the admin's profiles and caps. Shared by the SPANK plugin (submit-time
// checks) and the `stoker plan` command, so both say the same thing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/plan/plan.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker {

enum class Enable { Default, On, Off };  // --stoker / --stoker=off / nothing

struct UserOptions {
  Enable enable = Enable::Default;
  std::optional<std::string> profile;
  UserOverrides overrides;
  bool verbose = false;
  // The tuning flags given, as "--stoker-workers=4", in order (AllowOverride=no
  // rejects the first; --stoker, --stoker-profile and --stoker-verbose are not listed).
  std::vector<std::string> given;
};

// The flags, as the plugin registers them (without "--").
inline constexpr const char* kUserFlags[] = {
    "stoker",      "stoker-profile",  "stoker-workers",    "stoker-prefetch",
    "stoker-bind", "stoker-mem-bind", "stoker-pin-memory", "stoker-verbose"};

// Each call parses one flag value into `opts`. `flag` may be given with or without
// the leading "--". On a bad value it returns one line the plugin prints verbatim,
// naming the flag, the value and what is allowed, e.g.
//   "stoker: --stoker-workers=abc: expected auto or a whole number from 1 to 1024"
// and leaves `opts` unchanged. Returns "" on success.
std::string set_user_option(UserOptions& opts, std::string_view flag, std::string_view value);

// Checks the parsed options against the admin's profiles and caps; "" when fine,
// else one line like the above (unknown profile, a value over a cap, AllowOverride=no).
std::string validate_user_options(const UserOptions& opts, const ProfileSet& profiles);

// The profile the options select: --stoker-profile, else the admin's DefaultProfile.
// Throws stoker::Error for an unknown name (validate first to get the one-line message).
const Profile& selected_profile(const UserOptions& opts, const ProfileSet& profiles);

}  // namespace stoker
