#include "transforms/image_decoder.hpp"

#include <cstdio>
#include <cstring>

#include "stoker/common/error.hpp"
#include "stoker/transforms/decode_warnings.hpp"
#include "stoker/transforms/full_decode.hpp"

namespace stoker {

namespace {

thread_local DecodeWarnings warnings_here;

bool starts_with(std::span<const std::byte> b, const char* magic, size_t n, size_t at = 0) {
  return b.size() >= at + n && std::memcmp(b.data() + at, magic, n) == 0;
}

// Formats PIL opens that stoker does not decode: named, so the message says what to do.
const char* other_format(std::span<const std::byte> b) {
  if (starts_with(b, "GIF8", 4)) return "GIF";
  if (starts_with(b, "BM", 2)) return "BMP";
  if (starts_with(b, "II*\0", 4) || starts_with(b, "MM\0*", 4)) return "TIFF";
  if (starts_with(b, "\0\0\1\0", 4)) return "ICO";
  return nullptr;
}

}  // namespace

void note_decode_warning(const char* first_warning) {
  ++warnings_here.images;
  warnings_here.last = first_warning;
}

const DecodeWarnings& decode_warnings_on_this_thread() {
  return warnings_here;
}

ImageFormat sniff_image(std::span<const std::byte> bytes) {
  if (starts_with(bytes, "\xff\xd8\xff", 3)) return ImageFormat::Jpeg;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n", 8)) return ImageFormat::Png;
  if (starts_with(bytes, "RIFF", 4) && starts_with(bytes, "WEBP", 4, 8)) return ImageFormat::Webp;
  if (bytes.empty()) throw DecodeFailure("empty file (0 bytes)");
  if (const char* name = other_format(bytes)) {
    const bool vowel = name[0] == 'I';  // "an ICO image"
    throw DecodeFailure(std::string(vowel ? "an " : "a ") + name +
                        " image: stoker decodes JPEG, PNG and WebP only (convert the file)");
  }
  std::string first;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4); ++i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, " 0x%02x", static_cast<unsigned>(bytes[i]));
    first += hex;
  }
  throw DecodeFailure("not a JPEG, PNG or WebP file: " + std::to_string(bytes.size()) +
                      " bytes starting with" + first);
}

ImageHeader ImageDecoder::begin(std::span<const std::byte> bytes) {
  format_ = sniff_image(bytes);
  ImageHeader h;
  switch (format_) {
    case ImageFormat::Jpeg:
      h = jpeg_.begin(bytes);
      break;
    case ImageFormat::Png:
      h = png_.begin(bytes);
      break;
    case ImageFormat::Webp:
      h = webp_.begin(bytes);
      break;
  }
  // A header may claim up to 65535^2 (JPEG) or 2^62 (PNG) pixels in a few bytes: a
  // decompression bomb would take the worker's memory far past the plan's budget. Refuse,
  // before any pixel is allocated, what PIL refuses (DecompressionBombError).
  const uint64_t pixels = static_cast<uint64_t>(h.width) * static_cast<uint64_t>(h.height);
  if (pixels > kMaxImagePixels) {
    throw DecodeFailure(std::to_string(h.width) + "x" + std::to_string(h.height) + " = " +
                        std::to_string(pixels) + " pixels, more than " +
                        std::to_string(kMaxImagePixels) +
                        " (PIL's limit too: a decompression bomb, or an image to tile first)");
  }
  return h;
}

DecodedRegion ImageDecoder::decode(int denom, PixelRect want, std::vector<std::byte>& buf) {
  switch (format_) {
    case ImageFormat::Jpeg:
      return jpeg_.decode(denom, want, buf);
    case ImageFormat::Png:
      return png_.decode(want, buf);
    case ImageFormat::Webp:
      break;
  }
  return webp_.decode(want, buf);
}

DecodedRegion ImageDecoder::decode_full(std::span<const std::byte> bytes,
                                        std::vector<std::byte>& buf) {
  const ImageHeader h = begin(bytes);
  return decode(1, {0, 0, h.width, h.height}, buf);
}

RgbImage decode_rgb(std::span<const std::byte> bytes) {
  thread_local ImageDecoder decoder;
  thread_local std::vector<std::byte> buf;
  DecodedRegion r;
  try {
    r = decoder.decode_full(bytes, buf);
  } catch (const DecodeFailure& e) {
    throw Error("image", std::string("cannot be decoded: ") + e.what(),
                "check the file; stoker decodes JPEG, PNG and WebP");
  }
  RgbImage img{r.w, r.h, std::vector<uint8_t>(static_cast<size_t>(r.w) * r.h * 3)};
  for (int y = 0; y < r.h; ++y) {
    std::memcpy(img.pixels.data() + static_cast<size_t>(y) * r.w * 3, r.pixel(r.x, r.y + y),
                static_cast<size_t>(r.w) * 3);
  }
  return img;
}

}  // namespace stoker
