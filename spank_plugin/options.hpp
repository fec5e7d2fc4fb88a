// The user's --stoker flags: registered with Slurm in every context (so sbatch,
// salloc and srun accept them, also as #SBATCH lines), parsed by the shared
// set_user_option, and kept for the rest of the plugin. Callbacks may run twice
// (environment, then command line; and again in remote context): setting the same
// value again is harmless.
#pragma once

#include <functional>
#include <string>

#include "spank_api.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::spank {

struct OptionState {
  UserOptions opts;
  bool any_flag = false;     // some --stoker* flag was given (enable=opt-in)
  std::string remote_error;  // a flag value that failed to parse in remote context
  // Submit-time check of all flags so far against the admin's profiles and caps
  // ("" = fine, else the line to print). Set by the plugin in local/allocator context:
  // only an option callback's error stops srun/sbatch (init_post_opt's does not), so
  // each callback checks the whole set, and the first failing flag is the culprit.
  std::function<std::string(const UserOptions&)> check;
};

OptionState& option_state();

// Registers every flag. Returns the first error text, "" when all were registered.
std::string register_options(spank_t sp);

}  // namespace stoker::spank
