// WebP through libwebp: chosen by its bytes, lossless and lossy, alpha dropped as PIL's
// convert('RGB') drops it; a truncated file fails. tests/corpus/ compares real WebP files
// with PIL itself.
#include <gtest/gtest.h>
#include <webp/encode.h>

#include <cmath>
#include <cstring>

#include "image_fixtures.hpp"
#include "stoker/common/error.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/image_decoder.hpp"
#include "webp_fixtures.hpp"

namespace stoker {
namespace {

std::vector<std::byte> encoded(uint8_t* out, size_t n) {
  std::vector<std::byte> v(reinterpret_cast<std::byte*>(out),
                           reinterpret_cast<std::byte*>(out) + n);
  WebPFree(out);
  return v;
}

std::vector<uint8_t> decoded_rgb(const std::vector<std::byte>& file, int w, int h) {
  ImageDecoder dec;
  std::vector<std::byte> buf;
  EXPECT_EQ(sniff_image(file), ImageFormat::Webp);
  const DecodedRegion r = dec.decode_full(file, buf);
  EXPECT_EQ(r.w, w);
  EXPECT_EQ(r.h, h);
  std::vector<uint8_t> px;
  for (int y = 0; y < r.h; ++y) px.insert(px.end(), r.pixel(0, y), r.pixel(r.w, y));
  return px;
}

TEST(WebpDecode, LosslessWithAlphaGivesTheRgbExactly) {
  const int w = 67, h = 45;
  const std::vector<uint8_t> rgb = synthetic_image(w, h, 5);
  // exact: keep the colour under transparent pixels, which PIL's convert('RGB') shows.
  WebPConfig config;
  ASSERT_TRUE(WebPConfigInit(&config));
  config.lossless = 1;
  config.exact = 1;
  const std::vector<std::byte> file =
      test::encode_webp(config, test::with_alpha(rgb, 7), w, h, true);
  EXPECT_EQ(decoded_rgb(file, w, h), rgb);
}

TEST(WebpDecode, LossyIsCloseToTheEncodedPixelsAndARegionIsInside) {
  const int w = 120, h = 80;
  const std::vector<uint8_t> rgb = synthetic_image(w, h, 6);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeRGB(rgb.data(), w, h, w * 3, 95, &out);
  ASSERT_GT(n, 0u);
  const std::vector<std::byte> file = encoded(out, n);
  const std::vector<uint8_t> px = decoded_rgb(file, w, h);
  double diff = 0;
  for (size_t i = 0; i < px.size(); ++i) diff += std::abs(int{px[i]} - int{rgb[i]});
  EXPECT_LT(diff / static_cast<double>(px.size()), 6.0);
  ImageDecoder dec;
  std::vector<std::byte> buf;
  EXPECT_EQ(dec.begin(file).width, w);
  EXPECT_FALSE(dec.scalable());
  const DecodedRegion r = dec.decode(1, {31, 17, 40, 30}, buf);
  ASSERT_LE(r.x, 31);
  ASSERT_GE(r.x + r.w, 71);
  EXPECT_EQ(std::memcmp(r.pixel(31, 17), px.data() + (17 * w + 31) * 3, 40 * 3), 0);
}

TEST(FaultsImages, ATruncatedWebpFailsNamingTheFormat) {
  const int w = 64, h = 64;
  const std::vector<uint8_t> rgb = synthetic_image(w, h, 7);
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeRGB(rgb.data(), w, h, w * 3, 80, &out);
  std::vector<std::byte> file = encoded(out, n);
  file.resize(file.size() / 2);
  try {
    decode_rgb(file);
    ADD_FAILURE() << "a truncated WebP decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WebP"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stoker
