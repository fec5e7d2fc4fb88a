// A WebP decoder (libwebp) with the shape of JpegDecoder and PngDecoder: begin() reads the
// header, decode() returns RGB pixels. Lossy and lossless still images come out as PIL's
// Image.open(f).convert('RGB') makes them: alpha dropped, never composited. An animated
// WebP is refused with a message (PIL would read its first frame). The whole image is
// decoded: libwebp crops only at even offsets, and its cropped upsampling could differ at
// the region's edges from the full image PIL decodes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "transforms/decoded_region.hpp"

namespace stoker {

class WebpDecoder {
 public:
  // Starts decoding `bytes` (which must outlive the session): reads the header only.
  ImageHeader begin(std::span<const std::byte> bytes);
  // Decodes the image into `buf` (grown when too small); the region returned is the whole
  // image, which holds `want`.
  DecodedRegion decode(PixelRect want, std::vector<std::byte>& buf);

 private:
  std::span<const std::byte> bytes_;
  int width_ = 0, height_ = 0;
};

}  // namespace stoker
