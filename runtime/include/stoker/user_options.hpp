// Parsing and validating the user's stoker flags (--stoker-workers=auto|N, ...)
// against the admin's profiles and caps. Shared by the SPANK plugin (submit-time
// checks) and the `stoker plan` command, so both say the same thing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stoker/plan.hpp"
#include "stoker/profiles.hpp"

namespace stoker {

enum class Enable { Default, On, Off };  // --stoker / --stoker=off / nothing

struct UserOptions {
  Enable enable = Enable::Default;
  std::optional<std::string> profile;
  UserOverrides overrides;
  bool verbose = false;
};

// Each setter parses one flag value into `opts`. On a bad value it returns an
// error line naming the flag, the value and what is allowed, e.g.
//   "--stoker-workers=abc: expected auto or a whole number 1..1024"
// and leaves `opts` unchanged. Returns "" on success.
std::string set_user_option(UserOptions& opts, std::string_view flag, std::string_view value);

// Checks the parsed options against the admin's profiles and caps; "" when fine,
// else one error line naming the flag, its value and what is allowed.
std::string validate_user_options(const UserOptions& opts, const ProfileSet& profiles);

}  // namespace stoker
