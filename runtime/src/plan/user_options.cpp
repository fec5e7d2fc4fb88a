// The user's --stoker-* flags: one table of them with their parsers, and one set of
// messages for the plugin (sbatch/srun/salloc reject bad values at submit time) and
// `stoker plan`.
#include "stoker/plan/user_options.hpp"

#include "stoker/common/enum_names.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

namespace {

// "auto" (unset) or a whole number from 1 to `hi`; refuses anything else.
std::optional<int> auto_or_count(const FlagArg& arg, int hi) {
  if (arg.value == "auto") return std::nullopt;
  auto n = values::parse_whole(arg.value, 1, hi);
  if (!n) arg.refuse("expected auto or a whole number from 1 to " + std::to_string(hi));
  return static_cast<int>(*n);
}

// The value of `table` the flag names; refuses any other text.
template <typename E, size_t N>
E named(const FlagArg& arg, const EnumName<E> (&table)[N]) {
  auto v = value_named(table, arg.value);
  if (!v) arg.refuse("expected " + names_of(table));
  return *v;
}

constexpr UserFlag kRows[] = {
    {"stoker", "on|off", "Tune this job's input pipeline with stoker (default: the admin's choice)",
     2, false,
     [](UserOptions& o, const FlagArg& a) {
       if (a.value != "" && a.value != "on" && a.value != "off")
         a.refuse("expected on or off (no value means on)");
       o.enable = a.value == "off" ? TuneRequest::Off : TuneRequest::On;
     }},
    {"stoker-profile", "NAME", "stoker profile from the admin's list (stoker plan --list)", 1,
     false,
     [](UserOptions& o, const FlagArg& a) {
       if (!values::valid_name(a.value))
         a.refuse("expected a profile name (1-64 letters, digits, '-' or '_')");
       o.profile = std::string(a.value);
     }},
    {"stoker-workers", "auto|N", "Loader workers per rank", 1, true,
     [](UserOptions& o, const FlagArg& a) {
       o.overrides.workers = auto_or_count(a, limits::kMaxWorkers);
     }},
    {"stoker-prefetch", "auto|N", "Batches in flight per rank", 1, true,
     [](UserOptions& o, const FlagArg& a) {
       o.overrides.prefetch = auto_or_count(a, limits::kMaxPrefetch);
     }},
    {"stoker-bind", "gpu-numa|even|none", "How each rank's CPUs are chosen and bound", 1, true,
     [](UserOptions& o, const FlagArg& a) { o.overrides.bind = named(a, kBindModeNames); }},
    {"stoker-mem-bind", "local|strict|none",
     "Rank memory on its NUMA node(s): preferred, only there, or unbound", 1, true,
     [](UserOptions& o, const FlagArg& a) { o.overrides.mem_bind = named(a, kMemBindNames); }},
    {"stoker-pin-memory", "auto|yes|no", "Pinned host memory for batches", 1, true,
     [](UserOptions& o, const FlagArg& a) { o.overrides.pin_memory = named(a, kPinModeNames); }},
    {"stoker-verbose", nullptr, "Print each rank's stoker plan and reasons on stderr", 0, false,
     [](UserOptions& o, const FlagArg& a) {
       if (!a.value.empty()) a.refuse("takes no value");
       o.verbose = true;
     }},
};

std::string flag_list() {
  std::string out;
  for (const UserFlag& f : kUserFlags) out += std::string(out.empty() ? "" : ", ") + "--" + f.name;
  return out;
}

}  // namespace

// constinit: set before any code runs, so no static initialiser of another file can find
// the table empty.
constinit const std::span<const UserFlag> kUserFlags = kRows;

std::string FlagArg::given() const {
  return "--" + std::string(name) + "=" + std::string(value);
}

void FlagArg::refuse(const std::string& what) const {
  throw Error(given(), what);
}

void set_user_option(UserOptions& opts, std::string_view flag, std::string_view value) {
  if (flag.substr(0, 2) == "--") flag.remove_prefix(2);
  const FlagArg arg{flag, value};
  for (const UserFlag& row : kUserFlags) {
    if (flag != row.name) continue;
    row.parse(opts, arg);
    if (row.tunes) opts.given.push_back(arg.given());
    return;
  }
  throw Error(value.empty() ? "--" + std::string(flag) : arg.given(),
              "unknown flag; the stoker flags are " + flag_list());
}

void validate_user_options(const UserOptions& opts, const ProfileSet& profiles) {
  if (opts.profile && !profiles.has(*opts.profile))
    throw Error("--stoker-profile=" + *opts.profile,
                "unknown profile; the admin's profiles are " + profiles.names());
  const Caps& caps = profiles.caps;
  if (!caps.allow_override && !opts.given.empty())
    throw Error(opts.given.front(),
                "this cluster does not allow overrides (AllowOverride=no); choose a profile "
                "with --stoker-profile=NAME (" +
                    profiles.names() + ")");
  if (opts.overrides.prefetch && *opts.overrides.prefetch > caps.max_prefetch)
    throw Error("--stoker-prefetch=" + std::to_string(*opts.overrides.prefetch),
                "over the admin's cap MaxPrefetch=" + std::to_string(caps.max_prefetch));
}

}  // namespace stoker
