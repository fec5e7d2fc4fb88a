// spank_stoker: the SPANK entry points, dispatched on the context (as NVIDIA pyxis does).
// Every callback catches everything: no exception ever reaches Slurm's C code.
//   local/allocator (srun, sbatch, salloc): submit.cpp checks each flag at once.
//   remote (slurmstepd): stepd.cpp loads, plans, binds and exports per task.
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "boundary.hpp"
#include "options.hpp"
#include "plugin_config.hpp"
#include "slurm_version_gate.hpp"
#include "spank_api.hpp"
#include "stepd.hpp"
#include "stoker/common/error.hpp"
#include "submit.hpp"

// SPANK_PLUGIN defines these; in C++ a namespace-scope const has internal linkage,
// and Slurm would not find them, so declare them extern "C" first.
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
#ifdef STOKER_SPANK_BEFORE_21_08
// Slurm 20.11's SPANK_PLUGIN sets plugin_version to its second argument and defines no
// spank_plugin_version. Both as 21.08 and later define them: plugin_version is the release,
// so that a later Slurm refusing this plugin names it ("version (20.11.4)", not "(0.00.1)"),
// and every build exports the same entry points (check_symbols.sh). 20.11 reads neither.
SPANK_PLUGIN(stoker, SLURM_VERSION_NUMBER)
const unsigned int spank_plugin_version = 1;
#else
SPANK_PLUGIN(stoker, 1)
#endif

int slurm_spank_init(spank_t sp, int ac, char** av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
int slurm_spank_user_init(spank_t sp, int ac, char** av);
int slurm_spank_task_init(spank_t sp, int ac, char** av);
int slurm_spank_task_exit(spank_t sp, int ac, char** av);
int slurm_spank_exit(spank_t sp, int ac, char** av);
}

namespace stoker::spank {
namespace {

// Logs the line for an exception that escaped `callback`; throws nothing itself.
void log_escaped(const std::string& callback, const std::exception& e) noexcept {
  try {
    slurm_error("%s", boundary_line(callback, e).c_str());
  } catch (...) {  // no memory for the line
    slurm_error("stoker: %s: %s", callback.c_str(), e.what());
  }
}

// Runs a callback body: the one place where an exception becomes Slurm's status, a logged
// line (boundary.hpp) and `on_error`.
template <typename F>
int guarded(const std::string& callback, int on_error, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    log_escaped(callback, e);
  } catch (...) {
    slurm_error("stoker: %s: unknown error", callback.c_str());
  }
  return on_error;
}

bool remote() {
  return spank_context() == S_CTX_REMOTE;
}

// A flag's callback, in every context (remote = 1 in slurmstepd).
int on_flag(int val, const char* optarg, int remote) {
  return guarded(flag_name(val), remote ? 0 : -1,
                 [&] { return remote ? stepd_flag(val, optarg) : submit_flag(val, optarg); });
}

// The plugstack arguments; nullopt (after one error line) disables the plugin.
std::optional<PluginConfig> plugin_config(int ac, char** av) {
  std::vector<std::string> args;
  for (int i = 0; i < ac; ++i) args.emplace_back(av[i] ? av[i] : "");
  try {
    return parse_plugin_args(args);
  } catch (const Error& e) {
    slurm_error("stoker: %s; the plugin is disabled", e.what());
    return std::nullopt;
  }
}

}  // namespace
}  // namespace stoker::spank

namespace plugin = stoker::spank;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return plugin::guarded("init", 0, [&] {
    // Under another Slurm release than the one it was built for: one log line, no flags.
    if (!plugin::running_slurm_matches(sp)) return 0;
    const auto cfg = plugin::plugin_config(ac, av);
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
        plugin::submit_init(cfg);
        break;
      case S_CTX_REMOTE:
        plugin::stepd_init(cfg);
        break;
      default:  // slurmd, job_script: nothing to tune
        break;
    }
    // Flags are registered even when disabled, so jobs that use them still run.
    plugin::register_flags(sp, plugin::on_flag);
    return 0;
  });
}

// Submit-time checks are done flag by flag; in slurmstepd init_post_opt runs as root once
// the flags were replayed. task_init runs in slurmstepd only; the checks keep that explicit.
extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return plugin::guarded("init_post_opt", 0,
                         [&] { return plugin::remote() ? plugin::stepd_init_post_opt(sp) : 0; });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  return plugin::guarded("user_init", 0,
                         [&] { return plugin::remote() ? plugin::stepd_user_init(sp) : 0; });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return plugin::guarded("task_init", 0,
                         [&] { return plugin::remote() ? plugin::stepd_task_init(sp) : 0; });
}

// In slurmstepd as root, for each task Slurm reaps, before srun hears of it.
extern "C" int slurm_spank_task_exit(spank_t sp, int, char**) {
  return plugin::guarded("task_exit", 0, [&] {
    if (plugin::remote()) plugin::stepd_task_exit(sp);
    return 0;
  });
}

extern "C" int slurm_spank_exit(spank_t sp, int, char**) {
  return plugin::guarded("exit", 0, [&] {
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
        plugin::submit_exit();
        break;
      case S_CTX_REMOTE:
        plugin::stepd_exit(sp);
        break;
      default:
        break;
    }
    return 0;
  });
}
