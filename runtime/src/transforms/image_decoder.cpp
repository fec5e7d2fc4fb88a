#include "transforms/image_decoder.hpp"

#include <cstdio>
#include <cstring>

#include "stoker/common/error.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker {

namespace {

bool starts_with(std::span<const std::byte> b, const char* magic, size_t n, size_t at = 0) {
  return b.size() >= at + n && std::memcmp(b.data() + at, magic, n) == 0;
}

// Formats PIL opens that stoker does not decode: named, so the message says what to do.
const char* other_format(std::span<const std::byte> b) {
  if (starts_with(b, "GIF8", 4)) return "GIF";
  if (starts_with(b, "BM", 2)) return "BMP";
  if (starts_with(b, "RIFF", 4) && starts_with(b, "WEBP", 4, 8)) return "WebP";
  if (starts_with(b, "II*\0", 4) || starts_with(b, "MM\0*", 4)) return "TIFF";
  return nullptr;
}

}  // namespace

ImageFormat sniff_image(std::span<const std::byte> bytes) {
  if (starts_with(bytes, "\xff\xd8\xff", 3)) return ImageFormat::Jpeg;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n", 8)) return ImageFormat::Png;
  if (bytes.empty()) throw DecodeFailure("empty file (0 bytes)");
  if (const char* name = other_format(bytes)) {
    throw DecodeFailure(std::string("a ") + name +
                        " image: stoker decodes JPEG and PNG only (convert the file)");
  }
  std::string first;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4); ++i) {
    char hex[8];
    std::snprintf(hex, sizeof hex, " 0x%02x", static_cast<unsigned>(bytes[i]));
    first += hex;
  }
  throw DecodeFailure("not a JPEG or PNG file: " + std::to_string(bytes.size()) +
                      " bytes starting with" + first);
}

ImageHeader ImageDecoder::begin(std::span<const std::byte> bytes) {
  format_ = sniff_image(bytes);
  return format_ == ImageFormat::Jpeg ? jpeg_.begin(bytes) : png_.begin(bytes);
}

DecodedRegion ImageDecoder::decode(int denom, PixelRect want, std::vector<std::byte>& buf) {
  return format_ == ImageFormat::Jpeg ? jpeg_.decode(denom, want, buf) : png_.decode(want, buf);
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
                "check the file; stoker decodes JPEG and PNG");
  }
  RgbImage img{r.w, r.h, std::vector<uint8_t>(static_cast<size_t>(r.w) * r.h * 3)};
  for (int y = 0; y < r.h; ++y) {
    std::memcpy(img.pixels.data() + static_cast<size_t>(y) * r.w * 3, r.pixel(r.x, r.y + y),
                static_cast<size_t>(r.w) * 3);
  }
  return img;
}

}  // namespace stoker
