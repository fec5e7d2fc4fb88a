// The decoder the image pipeline runs: the file's first bytes choose JPEG, PNG or WebP (never
// its name: ImageNet holds a PNG named .JPEG). One per thread; both decoders are kept, so
// nothing is re-created when the formats alternate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "transforms/jpeg_decoder.hpp"
#include "transforms/png_decoder.hpp"
#include "transforms/webp_decoder.hpp"

namespace stoker {

enum class ImageFormat { Jpeg, Png, Webp };

// The format of `bytes` from its signature. Throws DecodeFailure saying what the data is
// instead: empty, another image format PIL opens and stoker does not decode (GIF, BMP,
// TIFF, ICO), or unknown (with its first bytes).
ImageFormat sniff_image(std::span<const std::byte> bytes);

// The most pixels an image may have: PIL's DecompressionBombError threshold (twice
// Image.MAX_IMAGE_PIXELS, 89,478,485), so stoker opens what PIL opens by default.
inline constexpr uint64_t kMaxImagePixels = 178'956'970;

class ImageDecoder {
 public:
  // Starts decoding `bytes` (which must outlive the session): reads the header only, and
  // throws DecodeFailure for an image of more than kMaxImagePixels.
  ImageHeader begin(std::span<const std::byte> bytes);
  // Whether decode() may scale by 1/2, 1/4, 1/8 (JPEG's DCT scaling); else denom must be 1.
  bool scalable() const { return format_ == ImageFormat::Jpeg; }
  // At least `want` (scaled-image pixels) as RGB; see JpegDecoder::decode, PngDecoder::decode.
  DecodedRegion decode(int denom, PixelRect want, std::vector<std::byte>& buf);
  // The whole image at full size.
  DecodedRegion decode_full(std::span<const std::byte> bytes, std::vector<std::byte>& buf);

 private:
  JpegDecoder jpeg_;
  PngDecoder png_;
  WebpDecoder webp_;
  ImageFormat format_ = ImageFormat::Jpeg;
};

}  // namespace stoker
