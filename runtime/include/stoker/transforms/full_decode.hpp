// The plain whole-image decode that `stoker bench images --limit` compares the loader's
// pipeline with (the loader itself decodes only the crop's region, often DCT-scaled).
//
// Implemented in src/transforms/: image_decoder.cpp.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace stoker {

// Decodes a whole JPEG file to RGB at full size (no crop, no DCT scaling) with
// libjpeg-turbo, into `rgb` (reused; grown when too small). One decoder per thread is kept
// between calls. Throws stoker::Error naming the problem when the bytes are not a JPEG it
// can decode.
void decode_full_image(std::span<const std::byte> file, std::vector<std::byte>& rgb);

}  // namespace stoker
