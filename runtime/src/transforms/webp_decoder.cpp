#include "transforms/webp_decoder.hpp"

#include <webp/decode.h>

#include <string>

namespace stoker {

namespace {

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt WebP data";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "a WebP feature libwebp does not decode";
    case VP8_STATUS_SUSPENDED:
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "truncated WebP file (the data ends early)";
    default:
      return "WebP decode error";
  }
}

}  // namespace

ImageHeader WebpDecoder::begin(std::span<const std::byte> bytes) {
  bytes_ = bytes;
  WebPBitstreamFeatures f;
  const VP8StatusCode s =
      WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f);
  if (s != VP8_STATUS_OK) throw DecodeFailure(status_text(s));
  if (f.has_animation) {
    throw DecodeFailure(
        "an animated WebP: stoker decodes still images (convert the file; PIL would read "
        "its first frame)");
  }
  width_ = f.width;
  height_ = f.height;
  return {width_, height_, f.has_alpha ? 4 : 3};
}

DecodedRegion WebpDecoder::decode(PixelRect, std::vector<std::byte>& buf) {
  const size_t stride = static_cast<size_t>(width_) * 3;
  const size_t need = stride * static_cast<size_t>(height_);
  if (buf.size() < need) buf.resize(need);
  auto* out = reinterpret_cast<uint8_t*>(buf.data());
  // RGB output drops the alpha channel, as PIL's convert('RGB') does.
  if (WebPDecodeRGBInto(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size(), out,
                        need, static_cast<int>(stride)) == nullptr) {
    WebPBitstreamFeatures f;
    const VP8StatusCode s =
        WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size(), &f);
    throw DecodeFailure(s == VP8_STATUS_OK ? "corrupt or truncated WebP data" : status_text(s));
  }
  return {out, stride, 0, 0, width_, height_};
}

}  // namespace stoker
