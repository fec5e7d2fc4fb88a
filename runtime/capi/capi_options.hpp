// A loader's options and an image transform's from the JSON the Python layer sends.
#pragma once

#include <string>
#include <vector>

#include "capi.hpp"
#include "stoker/loader/loader_options.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker::capi {

// The keys of the rows of loader_fields(), plus pin_main_thread (the Python layer's own).
LoaderOptions loader_options(const json& d);
// The keys of the rows of image_fields(); `others`: keys of the same object that are not the
// transform's (the source's: root, shards, ...). Any other key is a TypeError.
ImageTransformOptions image_options(const json& d, const std::vector<std::string>& others);

}  // namespace stoker::capi
