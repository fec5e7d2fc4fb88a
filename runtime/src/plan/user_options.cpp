// The user's --stoker-* flags: one parser and one set of messages for the plugin
// (sbatch/srun/salloc reject bad values at submit time) and `stoker plan`.
#include "stoker/plan/user_options.hpp"

#include "stoker/plan/limits.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {

std::string line(std::string_view flag, std::string_view value, bool has_value,
                 const std::string& what) {
  std::string out = "stoker: --" + std::string(flag);
  if (has_value) out += "=" + std::string(value);
  return out + ": " + what;
}

std::string flag_list() {
  std::string out;
  for (const UserFlag& f : kUserFlags) out += std::string(out.empty() ? "" : ", ") + "--" + f.name;
  return out;
}

// "auto" (out = unset) or 1..hi; false for anything else.
bool auto_or_count(std::string_view v, int hi, std::optional<int>& out) {
  if (v == "auto") {
    out.reset();
    return true;
  }
  auto n = values::parse_whole(v, 1, hi);
  if (n) out = static_cast<int>(*n);
  return n.has_value();
}

}  // namespace

std::string set_user_option(UserOptions& opts, std::string_view flag, std::string_view value) {
  if (flag.substr(0, 2) == "--") flag.remove_prefix(2);
  const std::string given = "--" + std::string(flag) + "=" + std::string(value);
  auto bad = [&](const std::string& expected) { return line(flag, value, true, expected); };

  if (flag == "stoker") {
    if (value.empty() || value == "on")
      opts.enable = TuneRequest::On;
    else if (value == "off")
      opts.enable = TuneRequest::Off;
    else
      return bad("expected on or off (no value means on)");
  } else if (flag == "stoker-profile") {
    if (!values::valid_name(value))
      return bad("expected a profile name (1-64 letters, digits, '-' or '_')");
    opts.profile = std::string(value);
  } else if (flag == "stoker-workers" || flag == "stoker-prefetch") {
    const bool workers = flag == "stoker-workers";
    const int hi = workers ? limits::kMaxWorkers : limits::kMaxPrefetch;
    std::optional<int> n;
    if (!auto_or_count(value, hi, n))
      return bad("expected auto or a whole number from 1 to " + std::to_string(hi));
    (workers ? opts.overrides.workers : opts.overrides.prefetch) = n;
    opts.given.push_back(given);
  } else if (flag == "stoker-bind") {
    auto b = parse_bind_mode(value);
    if (!b) return bad("expected " + names_of(kBindModeNames));
    opts.overrides.bind = *b;
    opts.given.push_back(given);
  } else if (flag == "stoker-mem-bind") {
    auto m = parse_mem_bind(value);
    if (!m) return bad("expected " + names_of(kMemBindNames));
    opts.overrides.mem_bind = *m;
    opts.given.push_back(given);
  } else if (flag == "stoker-pin-memory") {
    auto pin = parse_pin_mode(value);
    if (!pin) return bad("expected " + names_of(kPinModeNames));
    opts.overrides.pin_memory = *pin;
    opts.given.push_back(given);
  } else if (flag == "stoker-verbose") {
    if (!value.empty()) return bad("takes no value");
    opts.verbose = true;
  } else {
    return line(flag, value, !value.empty(), "unknown flag; the stoker flags are " + flag_list());
  }
  return {};
}

std::string validate_user_options(const UserOptions& opts, const ProfileSet& profiles) {
  if (opts.profile && !profiles.has(*opts.profile))
    return line("stoker-profile", *opts.profile, true,
                "unknown profile; the admin's profiles are " + profiles.names());
  const Caps& caps = profiles.caps;
  if (!caps.allow_override && !opts.given.empty())
    return "stoker: " + opts.given.front() +
           ": this cluster does not allow overrides (AllowOverride=no); choose a profile with "
           "--stoker-profile=NAME (" +
           profiles.names() + ")";
  if (opts.overrides.prefetch && *opts.overrides.prefetch > caps.max_prefetch)
    return line("stoker-prefetch", std::to_string(*opts.overrides.prefetch), true,
                "over the admin's cap MaxPrefetch=" + std::to_string(caps.max_prefetch));
  return {};
}

Error user_option_error(const std::string& problem) {
  const std::string_view prefix = "stoker: ";
  return Error("", problem.starts_with(prefix) ? problem.substr(prefix.size()) : problem);
}

}  // namespace stoker
