// WebP decodes only the region the transform reads (libwebp's cropping, a 2-pixel margin at
// even offsets): every region's pixels equal the full image's byte for byte, lossy (both
// loop filters, with and without alpha) and lossless, at odd and even offsets, touching each
// edge; a file cut below the region still fails.
#include <gtest/gtest.h>
#include <webp/decode.h>

#include <cstring>
#include <string>

#include "image_fixtures.hpp"
#include "transforms/image_decoder.hpp"
#include "webp_fixtures.hpp"

namespace stoker {
namespace {

enum class Kind { LossySimpleFilter, LossyStrongFilter, LossyAlpha, Lossless };

std::vector<std::byte> encode(Kind kind, const std::vector<uint8_t>& rgb, int w, int h) {
  WebPConfig config;
  EXPECT_TRUE(WebPConfigInit(&config));
  config.quality = 75;
  config.lossless = kind == Kind::Lossless;
  config.filter_type = kind == Kind::LossySimpleFilter ? 0 : 1;  // 0: simple, 1: strong
  config.filter_strength = 60;
  if (kind == Kind::LossyAlpha)
    return test::encode_webp(config, test::with_alpha(rgb, 5), w, h, true);
  return test::encode_webp(config, rgb, w, h, false);
}

class WebpCrop : public ::testing::TestWithParam<Kind> {};

TEST_P(WebpCrop, EveryRegionEqualsTheFullImageByteForByte) {
  const int w = 203, h = 157;  // odd sides: the last chroma sample covers one pixel
  const std::vector<std::byte> file = encode(GetParam(), synthetic_image(w, h, 11), w, h);
  int fw = 0, fh = 0;  // the full decode, as the decoder made it before it cropped
  uint8_t* full =
      WebPDecodeRGB(reinterpret_cast<const uint8_t*>(file.data()), file.size(), &fw, &fh);
  ASSERT_NE(full, nullptr);
  ASSERT_EQ(fw, w);
  const PixelRect rects[] = {{0, 0, w, h},         {0, 0, 1, 1},         {w - 1, h - 1, 1, 1},
                             {1, 1, 3, 3},         {2, 2, 5, 4},         {31, 17, 40, 30},
                             {32, 16, 41, 31},     {33, 19, 100, 80},    {0, 50, 64, 20},
                             {150, 0, w - 150, 9}, {77, h - 13, 60, 13}, {w - 41, 60, 41, 57},
                             {17, 16, 1, 1},       {16, 17, 2, 2},       {0, 0, w, 3},
                             {0, h - 2, w, 2},     {101, 3, 1, h - 3},   {5, 5, w - 10, h - 10}};
  ImageDecoder dec;
  std::vector<std::byte> buf;
  for (const PixelRect& want : rects) {
    SCOPED_TRACE(std::to_string(want.x) + "," + std::to_string(want.y) + " " +
                 std::to_string(want.w) + "x" + std::to_string(want.h));
    ASSERT_EQ(dec.begin(file).width, w);
    const DecodedRegion r = dec.decode(1, want, buf);
    ASSERT_LE(r.x, want.x);
    ASSERT_LE(r.y, want.y);
    ASSERT_GE(r.x + r.w, want.x + want.w);
    ASSERT_GE(r.y + r.h, want.y + want.h);
    int differ = 0;
    for (int y = want.y; y < want.y + want.h; ++y) {
      differ += std::memcmp(r.pixel(want.x, y), full + (static_cast<size_t>(y) * w + want.x) * 3,
                            static_cast<size_t>(want.w) * 3) != 0;
    }
    EXPECT_EQ(differ, 0) << "rows differ from the full decode";
  }
  WebPFree(full);
}

std::string kind_name(const ::testing::TestParamInfo<Kind>& i) {
  static const char* const names[] = {"LossySimpleFilter", "LossyStrongFilter", "LossyAlpha",
                                      "Lossless"};
  return names[static_cast<int>(i.param)];
}

INSTANTIATE_TEST_SUITE_P(Kinds, WebpCrop,
                         ::testing::Values(Kind::LossySimpleFilter, Kind::LossyStrongFilter,
                                           Kind::LossyAlpha, Kind::Lossless),
                         kind_name);

// A crop reads the data only down to its bottom rows; a file cut below the region must still
// fail, as the full decode (and PIL) fail: libwebp compares the RIFF size with the bytes.
TEST(WebpCropFaults, ACutFileFailsEvenWhenTheRegionIsAboveTheCut) {
  const int w = 256, h = 256;
  for (Kind kind : {Kind::LossyStrongFilter, Kind::Lossless}) {
    std::vector<std::byte> file = encode(kind, synthetic_image(w, h, 12), w, h);
    file.resize(file.size() * 3 / 4);
    ImageDecoder dec;
    std::vector<std::byte> buf;
    EXPECT_THROW(
        {
          dec.begin(file);
          dec.decode(1, {0, 0, 16, 16}, buf);
        },
        DecodeFailure);
  }
}

}  // namespace
}  // namespace stoker
