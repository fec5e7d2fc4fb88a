// A sampler's resume state <-> the dict state_dict() returns, for the loader and the sampler.
#pragma once

#include <string>

#include "capi.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker::capi {

// {"sampler": the state's text, "epoch", "consumed", "size", "seed"}.
inline json state_dict(const SamplerState& s) {
  return {{"sampler", s.to_string()},
          {"epoch", s.epoch},
          {"consumed", s.consumed},
          {"size", s.size},
          {"seed", s.seed}};
}

// The state in state_dict()["sampler"]; ValueError naming the key when it is malformed.
inline SamplerState parse_state(const std::string& text) {
  try {
    return SamplerState::parse(text);
  } catch (const Error& e) {
    throw ValueError(std::string("state_dict['sampler']: ") + e.what());
  }
}

}  // namespace stoker::capi
