// JPEG encoding of RGB pixels, and a smooth synthetic "photo" to encode: what the tests,
// the Google benchmarks and `stoker bench images --synthetic` use as data without files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stoker {

// How a JPEG stores its pixels: the kinds that real datasets hold.
enum class JpegColour {
  YCbCr,  // the usual
  Grey,   // one component (from the RGB's luma)
  Cmyk,   // four components, Adobe-inverted as Photoshop writes them
  Ycck,   // the same CMYK, stored as YCCK (Adobe transform 2)
};

struct JpegKind {
  JpegColour colour = JpegColour::YCbCr;
  int h_samp = 2, v_samp = 2;  // luma sampling of YCbCr/YCCK: 2x2 4:2:0, 2x1 4:2:2, 1x1 4:4:4
  bool progressive = false;
  int restart_rows = 0;      // a restart marker every N MCU rows (0: none)
  bool adobe_marker = true;  // Cmyk: write Adobe's APP14 marker (libjpeg always does)
};

// Encodes interleaved RGB (width*height*3 bytes) at `quality` (1..100) as `kind`. For the
// CMYK kinds the RGB is separated so that PIL's conversion gives it back (K from the
// brightest channel). Throws std::runtime_error on failure.
std::vector<std::byte> encode_jpeg(std::span<const uint8_t> rgb, int width, int height, int quality,
                                   const JpegKind& kind);
// YCbCr with 4:2:0 chroma subsampling, or 4:4:4 when `subsample` is false.
std::vector<std::byte> encode_jpeg(std::span<const uint8_t> rgb, int width, int height, int quality,
                                   bool subsample = true);

// Smooth, photo-like RGB content (gradients, soft blobs, mild texture), a pure function
// of (width, height, seed).
std::vector<uint8_t> synthetic_image(int width, int height, uint64_t seed);

}  // namespace stoker
