#include "options.hpp"

#include <iterator>

#include "stoker/common/error.hpp"

namespace stoker::spank {

namespace {

bool known(int val) {
  return val >= 0 && static_cast<size_t>(val) < std::size(kUserFlags);
}

// The value Slurm hands the callback. A switch has none. When sbatch forwards an
// option to the steps of its job (SLURM_SPANK__SLURM_SPANK_OPTION_* variables),
// Slurm 22.05 prints a missing value with "%s", so it comes back as "(null)".
std::string option_value(const UserFlag& f, const char* optarg) {
  if (f.has_arg == 0 || optarg == nullptr) return "";
  std::string v = optarg;
  return (f.has_arg == 2 && v == "(null)") ? "" : v;
}

}  // namespace

FlagState& flags() {
  static FlagState state;
  return state;
}

void register_flags(spank_t sp, spank_opt_cb_f callback) {
  for (size_t i = 0; i < std::size(kUserFlags); ++i) {
    spank_option opt{};
    opt.name = const_cast<char*>(kUserFlags[i].name);
    opt.arginfo = const_cast<char*>(kUserFlags[i].arginfo);
    opt.usage = const_cast<char*>(kUserFlags[i].usage);
    opt.has_arg = kUserFlags[i].has_arg;
    opt.val = static_cast<int>(i);
    opt.cb = callback;
    if (spank_option_register(sp, &opt) != ESPANK_SUCCESS)
      throw Error(std::string("--") + kUserFlags[i].name, "Slurm refused to register it");
  }
}

void record_flag(int val, const char* optarg) {
  if (!known(val)) return;
  FlagState& st = flags();
  st.any_flag = true;
  set_user_option(st.opts, kUserFlags[val].name, option_value(kUserFlags[val], optarg));
}

std::string flag_name(int val) {
  return std::string("--") + (known(val) ? kUserFlags[val].name : "stoker-?");
}

}  // namespace stoker::spank
