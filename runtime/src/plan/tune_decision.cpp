// Whether a step's tasks are tuned (tune_decision.hpp).
#include "stoker/plan/tune_decision.hpp"

namespace stoker {

StepKind step_kind(uint32_t step_id) {
  switch (step_id) {
    case 0xfffffffbu:
      return StepKind::Batch;
    case 0xfffffffau:
      return StepKind::Interactive;
    case 0xfffffffcu:
      return StepKind::Extern;
    default:
      return StepKind::Normal;
  }
}

TuneDecision should_tune(TunePolicy policy, bool batch_step, const UserOptions& options,
                         bool any_flag, StepKind kind) {
  if (kind == StepKind::Extern) return {false, "the extern step runs no user task"};
  if ((kind == StepKind::Batch || kind == StepKind::Interactive) && !batch_step) {
    return {false, "batch/interactive steps are not tuned (batch_step=no)"};
  }
  if (policy == TunePolicy::Never) return {false, "the admin set enable=never"};
  if (options.enable == TuneRequest::Off) return {false, "--stoker=off"};
  if (policy == TunePolicy::OptIn && !any_flag) {
    return {false, "enable=opt-in and no --stoker flag given"};
  }
  return {true, ""};
}

}  // namespace stoker
