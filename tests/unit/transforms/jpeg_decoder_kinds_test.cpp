// Every JPEG kind real datasets hold (grey, CMYK, YCCK, progressive, restart markers, each
// subsampling), written by libjpeg here: decoded to RGB close to the pixels encoded, and a
// region equal to the full decode inside it. tests/python/test_image_kinds.py compares the
// same kinds with PIL itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "image_fixtures.hpp"
#include "transforms/image_decoder.hpp"

namespace stoker {
namespace {

struct KindCase {
  const char* name;
  JpegKind kind;
};

std::vector<uint8_t> copy_rgb(const DecodedRegion& r) {
  std::vector<uint8_t> px;
  for (int y = r.y; y < r.y + r.h; ++y) px.insert(px.end(), r.pixel(r.x, y), r.pixel(r.x + r.w, y));
  return px;
}

class JpegKinds : public ::testing::TestWithParam<KindCase> {};

TEST_P(JpegKinds, DecodeCloseToTheEncodedPixelsAndRegionsMatch) {
  const int w = 163, h = 117;
  const auto src = synthetic_image(w, h, 9);
  const auto jpeg = encode_jpeg(src, w, h, 95, GetParam().kind);
  ASSERT_EQ(sniff_image(jpeg), ImageFormat::Jpeg);
  ImageDecoder dec;
  std::vector<std::byte> buf;
  const std::vector<uint8_t> full = copy_rgb(dec.decode_full(jpeg, buf));
  ASSERT_EQ(full.size(), src.size());
  const bool grey = GetParam().kind.colour == JpegColour::Grey;
  double diff = 0;
  for (size_t i = 0; i < full.size(); i += 3) {
    if (grey) {  // grey is repeated into R, G and B
      ASSERT_EQ(full[i], full[i + 1]);
      ASSERT_EQ(full[i], full[i + 2]);
      diff += std::abs(full[i] - (0.299 * src[i] + 0.587 * src[i + 1] + 0.114 * src[i + 2]));
    } else {
      for (int c = 0; c < 3; ++c) diff += std::abs(int(full[i + c]) - int(src[i + c]));
    }
  }
  EXPECT_LT(diff / (grey ? full.size() / 3 : full.size()), 3.0);

  ASSERT_TRUE(dec.scalable());
  const PixelRect want{41, 29, 70, 50};
  dec.begin(jpeg);
  const DecodedRegion r = dec.decode(1, want, buf);
  ASSERT_LE(r.x, want.x);
  ASSERT_GE(r.x + r.w, want.x + want.w);
  for (int y = want.y; y < want.y + want.h; ++y) {
    ASSERT_EQ(0, std::memcmp(r.pixel(want.x, y), &full[(static_cast<size_t>(y) * w + want.x) * 3],
                             static_cast<size_t>(want.w) * 3))
        << "row " << y;
  }
}

JpegKind kind(JpegColour colour, int h_samp = 2, int v_samp = 2) {
  JpegKind k;
  k.colour = colour;
  k.h_samp = h_samp;
  k.v_samp = v_samp;
  return k;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, JpegKinds,
    ::testing::Values(KindCase{"ycbcr420", kind(JpegColour::YCbCr)},
                      KindCase{"ycbcr422", kind(JpegColour::YCbCr, 2, 1)},
                      KindCase{"ycbcr444", kind(JpegColour::YCbCr, 1, 1)},
                      KindCase{"grey", kind(JpegColour::Grey)},
                      KindCase{"progressive", {JpegColour::YCbCr, 2, 2, true}},
                      KindCase{"restarts", {JpegColour::YCbCr, 2, 2, false, 1}},
                      KindCase{"cmyk", kind(JpegColour::Cmyk)},
                      KindCase{"cmyk_no_adobe", {JpegColour::Cmyk, 1, 1, false, 0, false}},
                      KindCase{"ycck", kind(JpegColour::Ycck)},
                      KindCase{"ycck_progressive", {JpegColour::Ycck, 2, 2, true}}),
    [](const ::testing::TestParamInfo<KindCase>& i) { return std::string(i.param.name); });

TEST(FaultsImages, ATruncatedJpegFailsWhateverRegionIsAsked) {
  const int w = 320, h = 240;
  for (bool progressive : {false, true}) {
    const auto jpeg = encode_jpeg(synthetic_image(w, h, 4), w, h, 90,
                                  JpegKind{JpegColour::YCbCr, 2, 2, progressive});
    const std::vector<std::byte> cut(jpeg.begin(), jpeg.begin() + jpeg.size() * 3 / 5);
    ImageDecoder dec;
    std::vector<std::byte> buf;
    // The top rows are intact; the missing EOI makes the decoder read on to the end.
    EXPECT_THROW(
        {
          dec.begin(cut);
          dec.decode(1, {0, 0, 40, 16}, buf);
        },
        DecodeFailure)
        << (progressive ? "progressive" : "baseline");
  }
}

TEST(JpegDecode, BytesAfterTheEndMarkerAreNoError) {
  const auto jpeg = encode_jpeg(synthetic_image(200, 150, 4), 200, 150, 90);
  std::vector<std::byte> padded = jpeg;
  padded.resize(padded.size() + 100, std::byte{0});  // no EOI at the very end: the slow path
  ImageDecoder dec;
  std::vector<std::byte> buf, buf2;
  dec.begin(padded);
  const auto part = copy_rgb(dec.decode(1, {0, 0, 200, 20}, buf));
  dec.begin(jpeg);
  EXPECT_EQ(part, copy_rgb(dec.decode(1, {0, 0, 200, 20}, buf2)));
}

}  // namespace
}  // namespace stoker
