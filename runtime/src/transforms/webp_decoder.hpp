// A WebP decoder (libwebp) with the shape of JpegDecoder and PngDecoder: begin() reads the
// header, decode() returns RGB pixels. Lossy and lossless still images come out as PIL's
// Image.open(f).convert('RGB') makes them: alpha dropped, never composited. An animated
// WebP is refused with a message (PIL would read its first frame). Only the region asked
// for is decoded (libwebp's cropping; lossy data still decodes the rows above it), with a
// 2-pixel margin at even offsets so that its pixels equal the full image's byte for byte.
// A file shorter than its RIFF header says is refused whatever the region (libwebp checks
// the size given against the header before it decodes a crop).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "transforms/decoded_region.hpp"

namespace stoker {

class WebpDecoder {
 public:
  static constexpr int kCropMargin = 2;  // pixels decoded around a region, each side

  // Starts decoding `bytes` (which must outlive the session): reads the header only.
  ImageHeader begin(std::span<const std::byte> bytes);
  // Decodes `want` (clipped to the image) into `buf`, grown when too small.
  DecodedRegion decode(PixelRect want, std::vector<std::byte>& buf);

 private:
  std::span<const std::byte> bytes_;
  int width_ = 0, height_ = 0;
};

}  // namespace stoker
