// ImageTransformOptions as a table (option_fields.hpp): the image pipeline's options, one row
// each, as stoker.Loader.images takes them. The C interface sets them by name, the Python
// layer checks its arguments against the rows, docs/reference.md lists them.
#pragma once

#include <vector>

#include "stoker/common/option_fields.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker {

const std::vector<OptionField<ImageTransformOptions>>& image_fields();

}  // namespace stoker
