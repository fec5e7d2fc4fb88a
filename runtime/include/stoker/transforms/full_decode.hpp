// Whole-image decodes, outside the loader's pipeline (which decodes only the crop's region,
// often DCT-scaled): decode_rgb, the pipeline's own decoders at full size (tests, fuzzing,
// the Python layer), and the plain libjpeg-turbo decode that
// `stoker bench images --limit` compares the pipeline with.
//
// Implemented in src/transforms/: image_decoder.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stoker {

// One image decoded whole, by the pipeline's decoders (image_transforms.hpp says which
// kinds, and how close to PIL's pixels).
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // height rows of width x 3 bytes (R, G, B)
};
// Throws stoker::Error (where "image") saying why `bytes` cannot be decoded: empty, not a
// JPEG or PNG, truncated or corrupt.
RgbImage decode_rgb(std::span<const std::byte> bytes);

// Decodes a whole JPEG file to RGB at full size (no crop, no DCT scaling) with
// libjpeg-turbo, into `rgb` (reused; grown when too small). One decoder per thread is kept
// between calls. Throws stoker::Error naming the problem when the bytes are not a JPEG it
// can decode.
void decode_full_image(std::span<const std::byte> file, std::vector<std::byte>& rgb);

}  // namespace stoker
