#include "transforms/webp_decoder.hpp"

#include <webp/decode.h>

#include <algorithm>
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

DecodedRegion WebpDecoder::decode(PixelRect want, std::vector<std::byte>& buf) {
  const int x0 = std::clamp(want.x, 0, width_ - 1), y0 = std::clamp(want.y, 0, height_ - 1);
  const int x1 = std::clamp(want.x + want.w, x0 + 1, width_);
  const int y1 = std::clamp(want.y + want.h, y0 + 1, height_);
  // libwebp decodes a crop bit for bit as the full image, except where its fancy chroma
  // upsampling meets the crop's edges (it treats them as the image's): a margin of one
  // chroma sample (2 pixels) around the region, at even offsets (chroma is halved), keeps
  // those edges out of the region.
  const int cx0 = std::max(x0 - kCropMargin, 0) & ~1, cy0 = std::max(y0 - kCropMargin, 0) & ~1;
  const int cx1 = std::min(x1 + kCropMargin, width_), cy1 = std::min(y1 + kCropMargin, height_);
  const size_t stride = static_cast<size_t>(cx1 - cx0) * 3;
  const size_t need = stride * static_cast<size_t>(cy1 - cy0);
  if (buf.size() < need) buf.resize(need);
  auto* out = reinterpret_cast<uint8_t*>(buf.data());
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw DecodeFailure("libwebp version mismatch");
  config.options.use_cropping = cx0 > 0 || cy0 > 0 || cx1 < width_ || cy1 < height_;
  config.options.crop_left = cx0;
  config.options.crop_top = cy0;
  config.options.crop_width = cx1 - cx0;
  config.options.crop_height = cy1 - cy0;
  // RGB output drops the alpha channel, as PIL's convert('RGB') does.
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out;
  config.output.u.RGBA.stride = static_cast<int>(stride);
  config.output.u.RGBA.size = need;
  const VP8StatusCode s =
      WebPDecode(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size(), &config);
  WebPFreeDecBuffer(&config.output);  // external memory: frees nothing of ours
  if (s != VP8_STATUS_OK) {
    throw DecodeFailure(s == VP8_STATUS_BITSTREAM_ERROR ? "corrupt or truncated WebP data"
                                                        : status_text(s));
  }
  const size_t at = static_cast<size_t>(y0 - cy0) * stride + static_cast<size_t>(x0 - cx0) * 3;
  return {out + at, stride, x0, y0, x1 - x0, y1 - y0};
}

}  // namespace stoker
