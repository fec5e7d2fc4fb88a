// A reusable libjpeg(-turbo) decompressor that decodes only a rectangle of the
// (optionally DCT-scaled) image: columns through jpeg_crop_scanline, rows above through
// jpeg_skip_scanlines, and it stops after the last needed row (jpeg_abort_decompress).
// One per thread: the libjpeg object is created once and reused for every image.
#pragma once

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>
#include <jerror.h>  // message codes (JWRN_*)

namespace stoker {

// Thrown for corrupt, truncated or unsupported data; the caller turns it into a SampleError.
struct JpegFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// libjpeg's error manager extended with a jump target. libjpeg's fatal errors (and the
// warnings that mean damaged data) longjmp to the setjmp of the method that called
// libjpeg, which then throws from its own frame, never through libjpeg's C frames.
struct JpegErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  jpeg_error_mgr* init();  // for cinfo.err
};

struct JpegHeader {
  int width = 0, height = 0, components = 0;
};

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
};

// Decoded RGB rows: row r holds pixels x .. x+w-1 of scaled-image row y+r.
struct DecodedRegion {
  const uint8_t* data = nullptr;
  size_t stride = 0;  // bytes between rows
  int x = 0, y = 0, w = 0, h = 0;
  const uint8_t* pixel(int px, int py) const {
    return data + static_cast<size_t>(py - y) * stride + static_cast<size_t>(px - x) * 3;
  }
};

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Starts decoding `bytes` (which must outlive the session): reads the header only.
  JpegHeader begin(std::span<const std::byte> bytes);
  // Image size after DCT scaling by 1/denom (denom 1, 2, 4 or 8), as libjpeg computes it.
  static int scaled(int size, int denom) { return (size + denom - 1) / denom; }
  // Decodes at least `want` (in scaled-image pixels, clipped to the image) into `buf`,
  // which is grown when too small, and ends the session. The returned region may start
  // left of want.x (libjpeg aligns columns to its iMCU width).
  DecodedRegion decode(int denom, PixelRect want, std::vector<std::byte>& buf);
  // Convenience: the whole image at 1/denom.
  DecodedRegion decode_full(std::span<const std::byte> bytes, int denom,
                            std::vector<std::byte>& buf);

 private:
  [[noreturn]] void fail();
  jpeg_decompress_struct cinfo_;
  JpegErrors err_;
  bool active_ = false;
};

}  // namespace stoker
