// The region decoder against libjpeg's own full decode of the same file.
#include <gtest/gtest.h>

#include <cstring>

#include "transforms/jpeg_decoder.hpp"
#include "transforms/jpeg_encoder.hpp"

namespace stoker {
namespace {

std::vector<std::byte> make_jpeg(int w, int h, uint64_t seed, bool subsample = true) {
  return encode_jpeg(synthetic_image(w, h, seed), w, h, 90, subsample);
}

// Copies a decoded region's pixels so a second decode cannot overwrite them.
struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> px;
  const uint8_t* at(int x, int y) const { return px.data() + (static_cast<size_t>(y) * w + x) * 3; }
};

Image full_decode(const std::vector<std::byte>& jpeg, int denom) {
  JpegDecoder dec;
  std::vector<std::byte> buf;
  const DecodedRegion r = dec.decode_full(jpeg, denom, buf);
  Image img{r.w, r.h, {}};
  for (int y = 0; y < r.h; ++y) {
    const uint8_t* row = r.pixel(0, y);
    img.px.insert(img.px.end(), row, row + static_cast<size_t>(r.w) * 3);
  }
  return img;
}

struct RegionCase {
  int w, h;
  bool subsample;
  int denom;
  PixelRect rect;
};

class RegionDecode : public ::testing::TestWithParam<RegionCase> {};

TEST_P(RegionDecode, EqualsTheFullDecodeInsideTheRegion) {
  const RegionCase c = GetParam();
  const auto jpeg = make_jpeg(c.w, c.h, 11, c.subsample);
  const Image full = full_decode(jpeg, c.denom);
  JpegDecoder dec;
  std::vector<std::byte> buf;
  const ImageHeader hdr = dec.begin(jpeg);
  EXPECT_EQ(hdr.width, c.w);
  EXPECT_EQ(hdr.height, c.h);
  const DecodedRegion r = dec.decode(c.denom, c.rect, buf);
  ASSERT_LE(r.x, c.rect.x);
  ASSERT_EQ(r.y, c.rect.y);
  ASSERT_GE(r.x + r.w, c.rect.x + c.rect.w);
  ASSERT_EQ(r.h, c.rect.h);
  int mismatches = 0;
  for (int y = c.rect.y; y < c.rect.y + c.rect.h; ++y) {
    for (int x = c.rect.x; x < c.rect.x + c.rect.w; ++x) {
      mismatches += std::memcmp(r.pixel(x, y), full.at(x, y), 3) != 0;
    }
  }
  EXPECT_EQ(mismatches, 0) << "region " << c.rect.x << "," << c.rect.y << " " << c.rect.w << "x"
                           << c.rect.h << " at 1/" << c.denom;
}

INSTANTIATE_TEST_SUITE_P(
    Regions, RegionDecode,
    ::testing::Values(RegionCase{500, 375, true, 1, {0, 0, 500, 375}},
                      RegionCase{500, 375, true, 1, {37, 53, 211, 190}},
                      RegionCase{500, 375, true, 1, {300, 200, 200, 175}},
                      RegionCase{500, 375, true, 1, {32, 48, 16, 16}},  // on iMCU borders
                      RegionCase{512, 384, true, 1, {16, 16, 480, 352}},
                      RegionCase{500, 375, false, 1, {33, 17, 101, 77}},
                      RegionCase{333, 251, true, 1, {1, 1, 5, 3}},
                      RegionCase{500, 375, true, 2, {20, 31, 150, 120}},
                      RegionCase{500, 375, true, 4, {9, 7, 100, 80}},
                      RegionCase{640, 480, true, 8, {3, 5, 60, 50}}));

TEST(JpegDecode, DctScalingIsCloseToAveragingTheFullDecode) {
  const int w = 480, h = 352;
  const auto jpeg = make_jpeg(w, h, 5);
  const Image full = full_decode(jpeg, 1);
  for (int d : {2, 4}) {
    const Image small = full_decode(jpeg, d);
    ASSERT_EQ(small.w, w / d);
    ASSERT_EQ(small.h, h / d);
    double sum_abs = 0;
    for (int y = 0; y < small.h; ++y) {
      for (int x = 0; x < small.w; ++x) {
        for (int c = 0; c < 3; ++c) {
          double mean = 0;
          for (int j = 0; j < d; ++j) {
            for (int i = 0; i < d; ++i) mean += full.at(x * d + i, y * d + j)[c];
          }
          sum_abs += std::abs(mean / (d * d) - small.at(x, y)[c]);
        }
      }
    }
    EXPECT_LT(sum_abs / (small.w * small.h * 3.0), 2.0) << "1/" << d;
  }
}

TEST(JpegDecode, GreyscaleIsExpandedToRgb) {
  JpegDecoder dec;
  std::vector<std::byte> buf;
  // A grey image encoded as RGB round-trips to R == G == B within JPEG error.
  std::vector<uint8_t> grey(64 * 48 * 3, 128);
  const auto jpeg = encode_jpeg(grey, 64, 48, 95);
  const DecodedRegion r = dec.decode_full(jpeg, 1, buf);
  EXPECT_NEAR(r.pixel(10, 10)[0], 128, 2);
  EXPECT_NEAR(r.pixel(10, 10)[1], 128, 2);
}

TEST(JpegDecode, CorruptAndTruncatedDataThrowAndTheDecoderStaysUsable) {
  const auto jpeg = make_jpeg(320, 240, 3);
  JpegDecoder dec;
  std::vector<std::byte> buf;
  const std::vector<std::byte> empty;
  EXPECT_THROW(dec.decode_full(empty, 1, buf), DecodeFailure);
  std::vector<std::byte> junk(1000, std::byte{0x42});
  EXPECT_THROW(dec.decode_full(junk, 1, buf), DecodeFailure);
  std::vector<std::byte> truncated(jpeg.begin(), jpeg.begin() + jpeg.size() / 3);
  EXPECT_THROW(dec.decode_full(truncated, 1, buf), DecodeFailure);
  std::vector<std::byte> header_only(jpeg.begin(), jpeg.begin() + 200);
  EXPECT_THROW(dec.decode_full(header_only, 1, buf), DecodeFailure);
  std::vector<std::byte> damaged = jpeg;
  for (size_t i = damaged.size() / 2; i < damaged.size() / 2 + 64; ++i)
    damaged[i] = std::byte{0xff};
  EXPECT_THROW(dec.decode_full(damaged, 1, buf), DecodeFailure);
  // After all that, a good image still decodes.
  const DecodedRegion r = dec.decode_full(jpeg, 1, buf);
  EXPECT_EQ(r.w, 320);
  EXPECT_EQ(r.h, 240);
}

}  // namespace
}  // namespace stoker
