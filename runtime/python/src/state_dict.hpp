// SamplerState <-> the dict state_dict() returns, shared by _Loader and _Sampler.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "stoker/distributed/sampler.hpp"

namespace stoker::python {

// {"sampler": the state's text, "epoch", "consumed", "size", "seed"}.
pybind11::dict state_dict_of(const SamplerState& s);
// The state in state_dict()["sampler"]; ValueError naming the key when it is malformed.
SamplerState parse_state_text(const std::string& text);

}  // namespace stoker::python
