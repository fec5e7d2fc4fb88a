// A PNG decoder (libpng) with the same shape as JpegDecoder: begin() reads the header,
// decode() returns the RGB pixels of a rectangle. Every PNG kind comes out as PIL's
// Image.open(f).convert('RGB') makes it (Pillow 9.4, Debian 12's python3-pil):
//  - palette, with or without tRNS: the palette colours (transparency ignored); an index
//    past the palette's end is PIL's grey (i, i, i);
//  - grey of 1, 2, 4 or 8 bits: scaled to 0..255 and repeated into three channels;
//  - 16-bit grey: clipped to 255 (PIL opens it in mode "I" and its I -> RGB conversion
//    clips, so most of a 16-bit grey photo is white there too);
//  - every other 16-bit kind: the high byte of each sample;
//  - alpha (grey+alpha, RGBA, 8 or 16 bits): dropped, never composited.
// Rows below the rectangle are not decompressed (a PNG cannot skip rows above it), except
// in a file that does not end with an IEND chunk: there every row is read, so a truncated
// file fails whatever rectangle is asked. Interlaced (Adam7) images are read whole.
// libpng's own state is created per image (libpng has no reset); one decoder per thread
// keeps the row buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <png.h>

#include "transforms/decoded_region.hpp"

namespace stoker {

// What libpng's callbacks (C functions) read from and report into.
struct PngInput {
  std::span<const std::byte> bytes;
  size_t at = 0;
  std::string message;  // libpng's error text
};

class PngDecoder {
 public:
  PngDecoder() = default;
  ~PngDecoder();
  PngDecoder(const PngDecoder&) = delete;
  PngDecoder& operator=(const PngDecoder&) = delete;

  // Starts decoding `bytes` (which must outlive the session): reads the header only.
  ImageHeader begin(std::span<const std::byte> bytes);
  // Decodes exactly `want` (clipped to the image) into `buf`, grown when too small, and
  // ends the session.
  DecodedRegion decode(PixelRect want, std::vector<std::byte>& buf);

 private:
  [[noreturn]] void fail();
  void end();
  void read_all_rows(int y0, int y1, int x0, uint8_t* out, size_t stride);
  void convert(const uint8_t* in, int x0, int n, uint8_t* out) const;

  PngInput input_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
  int width_ = 0, height_ = 0, channels_ = 0;
  bool wide_ = false;       // 16 bits per sample
  bool clip_grey_ = false;  // 16-bit grey: PIL clips at 255
  bool interlaced_ = false;
  bool ends_with_iend_ = false;
  bool palette_ = false;                // rows hold palette indices, one byte each
  std::array<uint8_t, 768> colours_{};  // PIL's palette: the file's, then (i, i, i)
  std::vector<uint8_t> rows_;           // one row, or the whole image when interlaced
  std::vector<uint8_t*> row_pointers_;
};

}  // namespace stoker
