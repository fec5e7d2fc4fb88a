// WebP test files written by libwebp's own encoder (the WebP decode and crop tests).
#pragma once

#include <webp/encode.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace stoker::test {

// `rgb` as RGBA with an alpha that varies (0 included): byte i's pixel gets i * step.
inline std::vector<uint8_t> with_alpha(const std::vector<uint8_t>& rgb, int step) {
  std::vector<uint8_t> rgba;
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgba.insert(rgba.end(), {rgb[i], rgb[i + 1], rgb[i + 2], static_cast<uint8_t>(i * step)});
  }
  return rgba;
}

// `pixels` of a w x h image (RGB, or RGBA when `rgba`) encoded with `config`; throws when
// libwebp refuses it.
inline std::vector<std::byte> encode_webp(const WebPConfig& config,
                                          const std::vector<uint8_t>& pixels, int w, int h,
                                          bool rgba) {
  WebPPicture pic;
  if (!WebPPictureInit(&pic)) throw std::runtime_error("WebPPictureInit failed");
  pic.width = w;
  pic.height = h;
  pic.use_argb = config.lossless;
  const bool imported = rgba ? WebPPictureImportRGBA(&pic, pixels.data(), w * 4)
                             : WebPPictureImportRGB(&pic, pixels.data(), w * 3);
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  pic.writer = WebPMemoryWrite;
  pic.custom_ptr = &writer;
  const bool encoded = imported && WebPEncode(&config, &pic);
  WebPPictureFree(&pic);
  std::vector<std::byte> file(reinterpret_cast<std::byte*>(writer.mem),
                              reinterpret_cast<std::byte*>(writer.mem) + writer.size);
  WebPMemoryWriterClear(&writer);
  if (!encoded) throw std::runtime_error("libwebp could not encode the test image");
  return file;
}

}  // namespace stoker::test
