#include "submit.hpp"

#include <string>

#include "options.hpp"
#include "spank_api.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker::spank {

namespace {

struct SubmitState {
  bool check = false;  // the plugin is enabled and tunes some jobs
  PluginConfig cfg;
  // The admin's profiles, read once at the first flag (the one copy in this process).
  std::optional<ProfileSet> profiles;
  bool unreadable = false;  // the file is broken: flags are not checked
};

SubmitState& state() {
  static SubmitState s;
  return s;
}

const ProfileSet* profiles(SubmitState& st) {
  if (st.unreadable) return nullptr;
  if (!st.profiles) {
    try {
      st.profiles = profiles_or_builtins(st.cfg.profiles_file());
    } catch (const Error& e) {
      // The admin's file is broken: the job must still run; its tasks will say so too.
      st.unreadable = true;
      slurm_error("stoker: warning: %s; --stoker flags not checked", e.what());
      return nullptr;
    }
  }
  return &*st.profiles;
}

}  // namespace

void submit_init(const std::optional<PluginConfig>& cfg) {
  SubmitState& st = state();
  st.check = cfg && cfg->enable != TunePolicy::Never;
  if (cfg) st.cfg = *cfg;
}

int submit_flag(int val, const char* optarg) {
  record_flag(val, optarg);
  // Only an option callback's error stops srun/sbatch (init_post_opt's does not), so each
  // callback checks the whole set, and the first failing flag is the culprit. A bad value
  // throws stoker::Error, which plugin.cpp's on_flag turns into Slurm's error and message.
  SubmitState& st = state();
  if (st.check) {
    if (const ProfileSet* p = profiles(st)) validate_user_options(flags().opts, *p);
  }
  return 0;
}

void submit_exit() {
  state().profiles.reset();
}

}  // namespace stoker::spank
