// JPEG encoding of RGB pixels, and a smooth synthetic "photo" to encode: what the tests,
// the Google benchmarks and `stoker bench images --synthetic` use as data without files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stoker {

// Encodes interleaved RGB (width*height*3 bytes) at `quality` (1..100) with 4:2:0 chroma
// subsampling, or 4:4:4 when `subsample` is false. Throws std::runtime_error on failure.
std::vector<std::byte> encode_jpeg(std::span<const uint8_t> rgb, int width, int height,
                                   int quality, bool subsample = true);

// Smooth, photo-like RGB content (gradients, soft blobs, mild texture), a pure function
// of (width, height, seed).
std::vector<uint8_t> synthetic_image(int width, int height, uint64_t seed);

}  // namespace stoker
