// What every image decoder shares: the header it reads first, the rectangle it is asked
// for, the RGB rows it returns, and the one exception type for data it cannot decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace stoker {

// Thrown for corrupt, truncated or unsupported data; the caller turns it into a SampleError.
struct DecodeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ImageHeader {
  int width = 0, height = 0, components = 0;  // components as stored (4: CMYK or YCCK)
};

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
};

// Decoded RGB rows: row r holds pixels x .. x+w-1 of (scaled-)image row y+r, 3 bytes each.
struct DecodedRegion {
  const uint8_t* data = nullptr;
  size_t stride = 0;  // bytes between rows (at least w * 3)
  int x = 0, y = 0, w = 0, h = 0;
  const uint8_t* pixel(int px, int py) const {
    return data + static_cast<size_t>(py - y) * stride + static_cast<size_t>(px - x) * 3;
  }
};

}  // namespace stoker
