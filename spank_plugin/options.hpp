// The user's --stoker flags as the plugin sees them: registered with Slurm in every context
// (so sbatch, salloc and srun accept them, also as #SBATCH lines) from the one table of
// them (kUserFlags), and parsed by the shared set_user_option. Callbacks may run twice
// (environment, then command line; and again in remote context): setting the same value
// again is harmless.
#pragma once

#include <string>

#include "spank_api.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::spank {

struct FlagState {
  UserOptions opts;
  bool any_flag = false;  // some --stoker* flag was given (enable=opt-in)
};
FlagState& flags();

// Registers every flag of kUserFlags with `callback`; the flag's index is its `val`.
// Throws stoker::Error naming the first flag Slurm refused.
void register_flags(spank_t sp, spank_opt_cb_f callback);

// Records flag number `val` with Slurm's `optarg` into flags(). Throws stoker::Error
// (what(): "--stoker-workers=abc: expected ...") when the value does not parse.
void record_flag(int val, const char* optarg);

// "--stoker-workers" for flag number `val`; "--stoker-?" when out of range.
std::string flag_name(int val);

}  // namespace stoker::spank
