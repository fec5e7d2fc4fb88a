#include "transforms/jpeg_decoder.hpp"

#include <algorithm>
#include <new>
#include <string>

namespace stoker {

namespace {

// libjpeg reports fatal errors through error_exit; it must not return. We jump back to the
// setjmp in the JpegDecoder method that called libjpeg, which throws a C++ exception
// from its own frame (never through libjpeg's C frames).
extern "C" void on_error_exit(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// libjpeg only warns about damaged data (extraneous bytes before a marker, a bad Huffman
// code, ...) and decodes on, as djpeg and PIL do: such an image is delivered and counted
// (decode_warnings.hpp). The one warning PIL refuses is the data's end before the image's
// last row ("image file is truncated" with ImageFile.LOAD_TRUNCATED_IMAGES off): libjpeg
// reports it as JWRN_JPEG_EOF and fills in grey; here it is an error, as in PIL. Once every
// row is decoded, PIL stops asking for data (its decoder is done even where
// jpeg_finish_decompress would read on): libjpeg's reader can still run off the end there,
// skipping a stray marker's "segment" (an APPn or COM inside the entropy-coded data), and the
// image is delivered, as PIL delivers it. Harmless warnings (unknown JFIF version, bogus ICC
// profile) are neither counted nor reported.
extern "C" void on_emit_message(j_common_ptr c, int level) {
  if (level >= 0) return;
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  switch (c->err->msg_code) {
    case JWRN_JPEG_EOF:
      if (!e->rows_done) on_error_exit(c);
      if (e->warning[0] == '\0') (*c->err->format_message)(c, e->warning);
      return;
    case JWRN_HIT_MARKER:
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_BOGUS_PROGRESSION:
      if (e->warning[0] == '\0') (*c->err->format_message)(c, e->warning);
      return;
    default:
      return;
  }
}

extern "C" void on_output_message(j_common_ptr) {}

// One RGB channel from Adobe-inverted CMYK as stored (s, k): PIL's "CMYK;I" unpacking
// (c = 255 - s) followed by its cmyk2rgb, nk - c * nk / 255 with nk = 255 - (255 - k),
// in PIL's rounding (MULDIV255), so the result equals PIL's to the level.
inline uint8_t cmyk_channel(unsigned s, unsigned k) {
  const unsigned t = (255 - s) * k + 128;
  return static_cast<uint8_t>(k - (((t >> 8) + t) >> 8));
}

// Rewrites a row of n CMYK pixels as n RGB pixels in place (3 <= 4 bytes: never overtakes).
void cmyk_row_to_rgb(uint8_t* row, int n) {
  for (int i = 0; i < n; ++i) {
    const uint8_t* in = row + static_cast<size_t>(i) * 4;
    const unsigned c = in[0], m = in[1], y = in[2], k = in[3];
    uint8_t* out = row + static_cast<size_t>(i) * 3;
    out[0] = cmyk_channel(c, k);
    out[1] = cmyk_channel(m, k);
    out[2] = cmyk_channel(y, k);
  }
}

}  // namespace

jpeg_error_mgr* JpegErrors::init() {
  jpeg_std_error(&pub);
  pub.error_exit = on_error_exit;
  pub.emit_message = on_emit_message;
  pub.output_message = on_output_message;
  message[0] = '\0';
  warning[0] = '\0';
  return &pub;
}

JpegDecoder::JpegDecoder() {
  cinfo_.err = err_.init();
  if (setjmp(err_.jump)) throw std::bad_alloc();  // the only failure: out of memory
  jpeg_create_decompress(&cinfo_);
}

JpegDecoder::~JpegDecoder() {
  jpeg_destroy_decompress(&cinfo_);
}

void JpegDecoder::fail() {
  jpeg_abort_decompress(&cinfo_);
  active_ = false;
  throw DecodeFailure(err_.message);
}

ImageHeader JpegDecoder::begin(std::span<const std::byte> bytes) {
  if (active_) jpeg_abort_decompress(&cinfo_);
  active_ = true;
  err_.warning[0] = '\0';
  err_.rows_done = false;
  if (bytes.size() < 4) {
    jpeg_abort_decompress(&cinfo_);
    active_ = false;
    throw DecodeFailure("not a JPEG file: " + std::to_string(bytes.size()) + " bytes");
  }
  const auto last = bytes.last(2);
  ends_with_eoi_ = last[0] == std::byte{0xff} && last[1] == std::byte{0xd9};
  if (setjmp(err_.jump)) fail();
  jpeg_mem_src(&cinfo_, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo_, TRUE);
  // libjpeg converts YCCK to CMYK itself; CMYK to RGB is PIL's formula (cmyk_row_to_rgb).
  cmyk_ = cinfo_.jpeg_color_space == JCS_CMYK || cinfo_.jpeg_color_space == JCS_YCCK;
  cinfo_.out_color_space = cmyk_ ? JCS_CMYK : JCS_RGB;  // grey is expanded to RGB
  return {static_cast<int>(cinfo_.image_width), static_cast<int>(cinfo_.image_height),
          cinfo_.num_components};
}

void JpegDecoder::read_rows(int y0, int y1, uint8_t* base, size_t stride) {
  constexpr int kBatchRows = 4;
  while (static_cast<int>(cinfo_.output_scanline) < y1) {
    const int at = static_cast<int>(cinfo_.output_scanline);
    const int n = std::min(kBatchRows, y1 - at);
    JSAMPROW rows[kBatchRows];
    for (int i = 0; i < n; ++i) rows[i] = base + static_cast<size_t>(at - y0 + i) * stride;
    const int got =
        static_cast<int>(jpeg_read_scanlines(&cinfo_, rows, static_cast<JDIMENSION>(n)));
    if (cmyk_) {
      for (int i = 0; i < got; ++i) cmyk_row_to_rgb(rows[i], static_cast<int>(cinfo_.output_width));
    }
  }
}

DecodedRegion JpegDecoder::decode(int denom, PixelRect want, std::vector<std::byte>& buf) {
  if (!active_) throw std::logic_error("JpegDecoder::decode without begin");
  if (setjmp(err_.jump)) fail();
  cinfo_.scale_num = 1;
  cinfo_.scale_denom = static_cast<unsigned>(denom);
  cinfo_.dct_method = JDCT_ISLOW;  // SIMD in libjpeg-turbo; IFAST saves little and loses accuracy
  jpeg_start_decompress(&cinfo_);
  const int full_w = static_cast<int>(cinfo_.output_width);
  const int full_h = static_cast<int>(cinfo_.output_height);
  const int x0 = std::clamp(want.x, 0, full_w - 1), y0 = std::clamp(want.y, 0, full_h - 1);
  const int x1 = std::clamp(want.x + want.w, x0 + 1, full_w);
  const int y1 = std::clamp(want.y + want.h, y0 + 1, full_h);
  // One extra column each side: fancy upsampling treats the ends of a cropped scanline as
  // image borders, so libjpeg's first and last columns may differ from a full decode.
  JDIMENSION xoff = static_cast<JDIMENSION>(std::max(x0 - 1, 0));
  JDIMENSION width = static_cast<JDIMENSION>(std::min(x1 + 1, full_w)) - xoff;
  if (xoff > 0 || static_cast<int>(width) < full_w) jpeg_crop_scanline(&cinfo_, &xoff, &width);
  if (y0 > 0) jpeg_skip_scanlines(&cinfo_, static_cast<JDIMENSION>(y0));
  const size_t stride = static_cast<size_t>(width) * (cmyk_ ? 4 : 3);
  const size_t need = stride * static_cast<size_t>(y1 - y0 + 1);  // + a row for the tail
  if (buf.size() < need) buf.resize(need);
  auto* base = reinterpret_cast<uint8_t*>(buf.data());
  read_rows(y0, y1, base, stride);
  // Perhaps truncated (no EOI at the end), or damaged (a warning so far): on to the EOI
  // marker, as PIL reads. Skipping still entropy-decodes, so a short file fails whatever
  // region is asked (JWRN_JPEG_EOF: PIL's "image file is truncated"), and a marker PIL
  // cannot read past the damage fails here too. An intact file stops below the region.
  if (!ends_with_eoi_ || err_.warning[0] != '\0') {
    if (y1 < full_h) {
      jpeg_skip_scanlines(&cinfo_, static_cast<JDIMENSION>(full_h - 1 - y1));
      read_rows(full_h - 1, full_h, base + stride * static_cast<size_t>(y1 - y0), stride);
    }
    err_.rows_done = true;
    jpeg_finish_decompress(&cinfo_);
  } else {
    jpeg_abort_decompress(&cinfo_);  // the rows below the region are not decoded
  }
  active_ = false;
  if (err_.warning[0] != '\0') note_decode_warning(err_.warning);
  return {base, stride, static_cast<int>(xoff), y0, static_cast<int>(width), y1 - y0};
}

DecodedRegion JpegDecoder::decode_full(std::span<const std::byte> bytes, int denom,
                                       std::vector<std::byte>& buf) {
  const ImageHeader h = begin(bytes);
  return decode(denom, {0, 0, scaled(h.width, denom), scaled(h.height, denom)}, buf);
}

}  // namespace stoker
