#include "options.hpp"

#include <exception>
#include <string>

namespace stoker::spank {

namespace {

struct Flag {
  const char* name;     // without the leading "--"
  const char* arginfo;  // shown in --help; nullptr for a switch
  const char* usage;
  int has_arg;  // 0 none, 1 required, 2 optional
};

// The order is the option's `val`, which the callback uses to find its name.
constexpr Flag kFlags[] = {
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

// The value Slurm hands the callback. A switch has none. When sbatch forwards an
// option to the steps of its job (SLURM_SPANK__SLURM_SPANK_OPTION_* variables),
// Slurm 22.05 prints a missing value with "%s", so it comes back as "(null)".
std::string option_value(const Flag& f, const char* optarg) {
  if (f.has_arg == 0 || optarg == nullptr) return "";
  std::string v = optarg;
  return (f.has_arg == 2 && v == "(null)") ? "" : v;
}

int on_option(int val, const char* optarg, int remote) {
  try {
    if (val < 0 || static_cast<size_t>(val) >= std::size(kFlags)) return 0;
    OptionState& st = option_state();
    const std::string flag = std::string("--") + kFlags[val].name;
    std::string problem = set_user_option(st.opts, flag, option_value(kFlags[val], optarg));
    st.any_flag = true;
    if (problem.empty() && !remote && st.check) problem = st.check(st.opts);
    if (problem.empty()) return 0;
    if (remote) {
      // Checked at submit time already; a value that still fails leaves the task
      // untuned with a warning rather than failing it.
      if (st.remote_error.empty()) st.remote_error = problem;
      return 0;
    }
    slurm_error("%s", problem.c_str());  // already "stoker: --flag=value: ..."
    return -1;
  } catch (const std::exception& e) {
    slurm_error("stoker: %s: %s", kFlags[val].name, e.what());
    return remote ? 0 : -1;
  } catch (...) {
    return remote ? 0 : -1;
  }
}

}  // namespace

OptionState& option_state() {
  static OptionState state;
  return state;
}

std::string register_options(spank_t sp) {
  for (size_t i = 0; i < std::size(kFlags); ++i) {
    spank_option opt{};
    opt.name = const_cast<char*>(kFlags[i].name);
    opt.arginfo = const_cast<char*>(kFlags[i].arginfo);
    opt.usage = const_cast<char*>(kFlags[i].usage);
    opt.has_arg = kFlags[i].has_arg;
    opt.val = static_cast<int>(i);
    opt.cb = on_option;
    if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
      return std::string("cannot register --") + kFlags[i].name;
    }
  }
  return "";
}

}  // namespace stoker::spank
