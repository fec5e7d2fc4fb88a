// LoaderOptions as a table (option_fields.hpp): the options a user sets, one row each. The C
// interface (stoker.Loader's keywords), `stoker bench`'s flags and docs/reference.md walk it;
// a new option is its member in loader_options.hpp and one row in loader_fields.cpp.
#pragma once

#include <vector>

#include "stoker/common/option_fields.hpp"
#include "stoker/loader/loader_options.hpp"

namespace stoker {

const std::vector<OptionField<LoaderOptions>>& loader_fields();

}  // namespace stoker
