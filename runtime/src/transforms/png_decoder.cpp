#include "transforms/png_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace stoker {

namespace {

// libpng's errors must not return: they jump back to the setjmp of the PngDecoder method
// that called libpng, which throws from its own frame (never through libpng's C frames).
extern "C" void on_png_error(png_structp png, png_const_charp message) {
  static_cast<PngInput*>(png_get_error_ptr(png))->message = message;
  png_longjmp(png, 1);
}

// Warnings are about ancillary chunks (a bad sRGB profile, a CRC in a text chunk); PIL
// ignores those as well.
extern "C" void on_png_warning(png_structp, png_const_charp) {}

extern "C" void on_png_read(png_structp png, png_bytep out, size_t n) {
  auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
  if (in->bytes.size() - in->at < n) png_error(png, "file ends early (truncated)");
  std::memcpy(out, in->bytes.data() + in->at, n);
  in->at += n;
}

// The last chunk of a whole PNG: length 0, "IEND", CRC.
bool ends_with_iend(std::span<const std::byte> b) {
  return b.size() >= 12 && std::memcmp(b.data() + b.size() - 8, "IEND", 4) == 0;
}

}  // namespace

PngDecoder::~PngDecoder() {
  end();
}

void PngDecoder::end() {
  if (png_ != nullptr) png_destroy_read_struct(&png_, info_ != nullptr ? &info_ : nullptr, nullptr);
  png_ = nullptr;
  info_ = nullptr;
}

void PngDecoder::fail() {
  std::string why = "PNG: " + input_.message;
  end();
  throw DecodeFailure(why);
}

ImageHeader PngDecoder::begin(std::span<const std::byte> bytes) {
  end();
  input_.bytes = bytes;
  input_.at = 0;
  input_.message.clear();
  ends_with_iend_ = ends_with_iend(bytes);
  png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &input_, on_png_error, on_png_warning);
  if (png_ != nullptr) info_ = png_create_info_struct(png_);
  if (info_ == nullptr) {
    end();
    throw std::bad_alloc();
  }
  if (setjmp(png_jmpbuf(png_))) fail();
  png_set_read_fn(png_, &input_, on_png_read);
  png_read_info(png_, info_);
  png_uint_32 width = 0, height = 0;
  int depth = 0, colour = 0, interlace = 0;
  png_get_IHDR(png_, info_, &width, &height, &depth, &colour, &interlace, nullptr, nullptr);
  // Grey below 8 bits becomes 8-bit samples; 16 bits stay 16 so that convert() can reduce
  // them as PIL does; tRNS never becomes an alpha channel. Palette indices stay indices (one
  // byte each) and convert() looks them up in PIL's table: the file's colours, then for an
  // index past them PIL's grey ramp (i, i, i). libpng's own expansion gave black there.
  palette_ = colour == PNG_COLOR_TYPE_PALETTE;
  if (palette_) {
    if (depth < 8) png_set_packing(png_);
    png_colorp plte = nullptr;
    int entries = 0;
    png_get_PLTE(png_, info_, &plte, &entries);
    for (int i = 0; i < 256; ++i) {
      const bool own = i < entries;
      colours_[3 * i] = own ? plte[i].red : static_cast<uint8_t>(i);
      colours_[3 * i + 1] = own ? plte[i].green : static_cast<uint8_t>(i);
      colours_[3 * i + 2] = own ? plte[i].blue : static_cast<uint8_t>(i);
    }
  }
  if (colour == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png_);
  interlaced_ = interlace != PNG_INTERLACE_NONE;
  if (interlaced_) png_set_interlace_handling(png_);
  png_read_update_info(png_, info_);
  width_ = static_cast<int>(width);
  height_ = static_cast<int>(height);
  channels_ = png_get_channels(png_, info_);
  wide_ = png_get_bit_depth(png_, info_) == 16;
  clip_grey_ = wide_ && colour == PNG_COLOR_TYPE_GRAY;
  return {width_, height_, channels_};
}

// Writes n RGB pixels from row `in` starting at column x0, as PIL's convert('RGB') does.
void PngDecoder::convert(const uint8_t* in, int x0, int n, uint8_t* out) const {
  const size_t bytes = wide_ ? 2 : 1;  // per sample; 16-bit samples are big-endian
  const size_t step = static_cast<size_t>(channels_) * bytes;
  in += static_cast<size_t>(x0) * step;
  if (palette_) {
    for (int i = 0; i < n; ++i, out += 3) std::memcpy(out, &colours_[3 * size_t{in[i]}], 3);
    return;
  }
  if (channels_ <= 2) {  // grey, grey + alpha
    for (int i = 0; i < n; ++i, in += step, out += 3) {
      const uint8_t v =
          clip_grey_ ? static_cast<uint8_t>(std::min((in[0] << 8) | in[1], 255)) : in[0];
      out[0] = out[1] = out[2] = v;
    }
    return;
  }
  for (int i = 0; i < n; ++i, in += step, out += 3) {  // RGB, RGBA: the (high) bytes
    out[0] = in[0];
    out[1] = in[bytes];
    out[2] = in[2 * bytes];
  }
}

DecodedRegion PngDecoder::decode(PixelRect want, std::vector<std::byte>& buf) {
  if (png_ == nullptr) throw std::logic_error("PngDecoder::decode without begin");
  const int x0 = std::clamp(want.x, 0, width_ - 1), y0 = std::clamp(want.y, 0, height_ - 1);
  const int x1 = std::clamp(want.x + want.w, x0 + 1, width_);
  const int y1 = std::clamp(want.y + want.h, y0 + 1, height_);
  const size_t stride = static_cast<size_t>(x1 - x0) * 3;
  if (buf.size() < stride * static_cast<size_t>(y1 - y0)) buf.resize(stride * (y1 - y0));
  auto* out = reinterpret_cast<uint8_t*>(buf.data());
  const size_t row_bytes = png_get_rowbytes(png_, info_);
  // Adam7 fills every row in seven passes: an interlaced image is read whole.
  rows_.resize(row_bytes * (interlaced_ ? static_cast<size_t>(height_) : 1));
  if (interlaced_) {
    row_pointers_.resize(static_cast<size_t>(height_));
    for (int y = 0; y < height_; ++y) row_pointers_[y] = rows_.data() + row_bytes * y;
  }
  if (setjmp(png_jmpbuf(png_))) fail();
  if (interlaced_) {
    png_read_image(png_, row_pointers_.data());
    for (int y = y0; y < y1; ++y) {
      convert(row_pointers_[y], x0, x1 - x0, out + stride * (y - y0));
    }
  } else {
    const int last = ends_with_iend_ ? y1 : height_;
    for (int y = 0; y < last; ++y) {
      png_read_row(png_, rows_.data(), nullptr);
      if (y >= y0 && y < y1) convert(rows_.data(), x0, x1 - x0, out + stride * (y - y0));
    }
  }
  end();
  return {out, stride, x0, y0, x1 - x0, y1 - y0};
}

}  // namespace stoker
