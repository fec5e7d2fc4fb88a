// Whether a step's tasks are tuned: the admin's policy (the plugstack's enable=), the user's
// --stoker[=on|off] and the step's kind (tune_decision.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/common/enum_names.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker {

// The admin's policy, the plugstack argument enable=: which jobs the plugin tunes (every job
// unless --stoker=off, only jobs with a stoker flag, or none).
enum class TunePolicy { Always, OptIn, Never };
inline constexpr EnumName<TunePolicy> kTunePolicyNames[] = {
    {TunePolicy::Always, "always"}, {TunePolicy::OptIn, "opt-in"}, {TunePolicy::Never, "never"}};
inline const char* to_string(TunePolicy p) {
  return name_of(kTunePolicyNames, p);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<TunePolicy> parse_tune_policy(std::string_view s) {
  return value_named(kTunePolicyNames, s);
}

// Step kinds as Slurm numbers them (slurm.h).
enum class StepKind { Normal, Batch, Interactive, Extern };
StepKind step_kind(uint32_t step_id);

// Whether a step's tasks are tuned, with the reason when not. `any_flag`: some --stoker*
// flag was given; `batch_step`: the plugstack argument batch_step=yes.
struct TuneDecision {
  bool tune = false;
  std::string why_not;
};
TuneDecision should_tune(TunePolicy policy, bool batch_step, const UserOptions& options,
                         bool any_flag, StepKind kind);

}  // namespace stoker
