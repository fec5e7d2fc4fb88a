// A reusable libjpeg(-turbo) decompressor that decodes only a rectangle of the
// (optionally DCT-scaled) image: columns through jpeg_crop_scanline, rows above through
// jpeg_skip_scanlines, and it stops after the last needed row (jpeg_abort_decompress).
// One per thread: the libjpeg object is created once and reused for every image.
// Every colour space PIL reads comes out as RGB the way PIL's Image.convert('RGB') makes it:
// grey is repeated into three channels; CMYK and YCCK (decoded to CMYK by libjpeg) are read
// with Adobe's inverted polarity, as PIL always assumes, and converted with PIL's formula.
#pragma once

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <cstdio>  // jpeglib.h needs FILE and size_t first: a block of its own, so it stays first

#include <jerror.h>  // message codes (JWRN_*)
#include <jpeglib.h>

#include "transforms/decoded_region.hpp"

namespace stoker {
// Counts an image delivered with a warning (image_decoder.cpp keeps the thread's count).
void note_decode_warning(const char* first_warning);
}  // namespace stoker

namespace stoker {

// libjpeg's error manager extended with a jump target. libjpeg's fatal errors (and the
// warning that means truncated data) longjmp to the setjmp of the method that called
// libjpeg, which then throws from its own frame, never through libjpeg's C frames.
struct JpegErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  char warning[JMSG_LENGTH_MAX];  // the image's first data warning, "" when none
  // Every row was decoded: the data's end is then no longer "truncated" (PIL's rule).
  bool rows_done = false;
  jpeg_error_mgr* init();  // for cinfo.err
};

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Starts decoding `bytes` (which must outlive the session): reads the header only.
  ImageHeader begin(std::span<const std::byte> bytes);
  // Image size after DCT scaling by 1/denom (denom 1, 2, 4 or 8), as libjpeg computes it.
  static int scaled(int size, int denom) { return (size + denom - 1) / denom; }
  // Decodes at least `want` (in scaled-image pixels, clipped to the image) into `buf`,
  // which is grown when too small, and ends the session. The returned region may start
  // left of want.x (libjpeg aligns columns to its iMCU width). Rows below the region are
  // not decoded, except in a file that does not end with an EOI marker: there the entropy
  // data is read on to the last row, so a truncated file fails whatever region is asked.
  // An image libjpeg decodes with data warnings is delivered and counted on this thread
  // (stoker/transforms/decode_warnings.hpp); only the end of its data before the image's
  // is an error (truncated), as in PIL.
  DecodedRegion decode(int denom, PixelRect want, std::vector<std::byte>& buf);
  // Convenience: the whole image at 1/denom.
  DecodedRegion decode_full(std::span<const std::byte> bytes, int denom,
                            std::vector<std::byte>& buf);

 private:
  [[noreturn]] void fail();
  void read_rows(int y0, int y1, uint8_t* base, size_t stride);
  jpeg_decompress_struct cinfo_;
  JpegErrors err_;
  bool active_ = false;
  bool cmyk_ = false;  // 4 components (CMYK or YCCK): decoded to CMYK, then to RGB
  bool ends_with_eoi_ = false;
};

}  // namespace stoker
