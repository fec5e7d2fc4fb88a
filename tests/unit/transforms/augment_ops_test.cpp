// The colour, histogram and enhancement augmentations (augment_ops.cpp): their names, their
// identities and inverses, and bytes Pillow 9.4 gave through torchvision's _apply_op on a
// small image whose every byte is different (tests/python/test_augment_ops.py compares the
// whole of apply_op with torchvision on the real-image corpus).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "enum_names_check.hpp"
#include "stoker/common/error.hpp"
#include "stoker/transforms/augment_ops.hpp"

namespace stoker {
namespace {

// 5 x 4 pixels, byte i = 13 * i mod 256: the image the expected bytes below came from.
std::vector<uint8_t> ramp() {
  std::vector<uint8_t> v(5 * 4 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 13 % 256);
  return v;
}

std::vector<uint8_t> applied(AugmentOp op, double magnitude, std::vector<uint8_t> pixels,
                             int width = 5, int height = 4) {
  std::vector<uint8_t> spare(pixels.size());
  apply_augment_op(op, magnitude, {pixels.data(), width, height}, spare.data());
  return pixels;
}

TEST(AugmentOps, NamesRoundTripAsTorchvisionSpellsThem) {
  expect_names_round_trip(
      kAugmentOpNames, [](AugmentOp o) { return to_string(o); }, parse_augment_op);
  EXPECT_EQ(parse_augment_op("ShearX"), AugmentOp::ShearX);
  EXPECT_FALSE(parse_augment_op("shearx").has_value());
}

TEST(AugmentOps, NeutralMagnitudesLeaveTheImage) {
  const std::vector<uint8_t> image = ramp();
  for (AugmentOp op :
       {AugmentOp::Identity, AugmentOp::Brightness, AugmentOp::Color, AugmentOp::Contrast,
        AugmentOp::Sharpness, AugmentOp::ShearX, AugmentOp::TranslateY, AugmentOp::Rotate}) {
    EXPECT_EQ(applied(op, 0.0, image), image) << to_string(op);
  }
  EXPECT_EQ(applied(AugmentOp::Posterize, 8.0, image), image);
  EXPECT_EQ(applied(AugmentOp::Solarize, 256.0, image), image);  // no byte reaches it
}

TEST(AugmentOps, InvertAndSolarizeAtZeroAgree) {
  const std::vector<uint8_t> image = ramp();
  const std::vector<uint8_t> inverted = applied(AugmentOp::Invert, 0.0, image);
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(inverted[i], 255 - image[i]);
  EXPECT_EQ(applied(AugmentOp::Solarize, 0.0, image), inverted);
  EXPECT_EQ(applied(AugmentOp::Invert, 0.0, inverted), image);
}

TEST(AugmentOps, PosterizeKeepsTheHighBits) {
  const std::vector<uint8_t> out = applied(AugmentOp::Posterize, 2.9, ramp());  // int(): 2
  const std::vector<uint8_t> image = ramp();
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(out[i], image[i] & 0xC0);
  for (uint8_t v : applied(AugmentOp::Posterize, 0.0, ramp())) ASSERT_EQ(v, 0);
}

TEST(AugmentOps, BrightnessMinusOneIsBlackAndExtrapolationClips) {
  for (uint8_t v : applied(AugmentOp::Brightness, -1.0, ramp())) ASSERT_EQ(v, 0);
  const std::vector<uint8_t> want = {0,   32,  65,  97,  130, 162, 195, 227, 255, 255, 255, 255,
                                     255, 255, 255, 255, 255, 255, 255, 255, 10,  42,  75,  107,
                                     140, 172, 205, 237, 255, 255, 255, 255, 255, 255, 255, 255,
                                     255, 255, 255, 255, 20,  52,  85,  117, 150, 182, 215, 247,
                                     255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
  EXPECT_EQ(applied(AugmentOp::Brightness, 1.5, ramp()), want);
}

TEST(AugmentOps, ColorBlendsWithPillowsLuma) {
  const std::vector<uint8_t> want = {
      5,   12, 18, 44, 51, 57, 83, 90,  96,  122, 129, 135, 161, 168, 174, 200, 207, 213, 224, 231,
      109, 22, 29, 35, 61, 68, 74, 100, 107, 113, 139, 146, 152, 178, 185, 191, 217, 224, 230, 166,
      45,  51, 39, 46, 52, 78, 85, 91,  117, 124, 130, 156, 163, 169, 195, 202, 208, 234, 241, 247};
  EXPECT_EQ(applied(AugmentOp::Color, -0.5, ramp()), want);
}

TEST(AugmentOps, ContrastBlendsWithTheRoundedMeanLuma) {
  const std::vector<uint8_t> want = {
      0, 0, 0, 3,  21, 39, 58, 76, 94,  112, 130, 149, 167, 185, 203, 221, 240, 255, 255, 255,
      0, 0, 0, 9,  27, 45, 63, 81, 100, 118, 136, 154, 172, 191, 209, 227, 245, 255, 255, 255,
      0, 0, 0, 14, 32, 51, 69, 87, 105, 123, 142, 160, 178, 196, 214, 233, 251, 255, 255, 255};
  EXPECT_EQ(applied(AugmentOp::Contrast, 0.4, ramp()), want);
}

TEST(AugmentOps, SharpnessKeepsTheBorderAndFiltersTheInside) {
  const std::vector<uint8_t> want = {
      0, 13, 26, 39, 52, 65, 78, 91, 104, 117, 130, 143, 156, 169, 182, 195, 208, 221, 255, 255,
      0, 0,  0,  23, 36, 59, 72, 95, 108, 121, 134, 147, 160, 183, 196, 218, 231, 254, 255, 255,
      0, 0,  34, 47, 60, 73, 86, 99, 112, 125, 138, 151, 164, 177, 190, 203, 216, 229, 242, 255};
  EXPECT_EQ(applied(AugmentOp::Sharpness, 0.5, ramp()), want);
  // Below 3 x 3 the filter copies the image, so every factor leaves it.
  const std::vector<uint8_t> small(2 * 7 * 3, 99);
  std::vector<uint8_t> varied = small;
  varied[4] = 3;
  EXPECT_EQ(applied(AugmentOp::Sharpness, 0.9, varied, 7, 2), varied);
}

TEST(AugmentOps, AutoContrastStretchesEachChannel) {
  const std::vector<uint8_t> want = {
      0, 5,  22, 39, 46, 61, 79, 88, 101, 118, 130, 141, 158, 171, 180, 198, 213, 220, 237, 255,
      0, 17, 23, 39, 56, 65, 79, 96, 106, 118, 136, 148, 158, 175, 189, 198, 215, 231, 237, 255,
      0, 17, 34, 41, 56, 74, 83, 96, 113, 124, 136, 153, 166, 175, 193, 208, 215, 232, 249, 255};
  EXPECT_EQ(applied(AugmentOp::AutoContrast, 0.0, ramp()), want);
  const std::vector<uint8_t> flat(5 * 4 * 3, 77);  // one value: left as it is
  EXPECT_EQ(applied(AugmentOp::AutoContrast, 0.0, flat), flat);
}

TEST(AugmentOps, EqualizeSpreadsThreeEqualLevels) {
  // 900 pixels, a third each at 10, 20, 30 in red: Pillow's table maps them to 0, 150, 255.
  std::vector<uint8_t> image(30 * 30 * 3);
  for (size_t p = 0; p < 900; ++p) {
    image[3 * p] = static_cast<uint8_t>(10 + 10 * (p / 300));
    image[3 * p + 1] = image[3 * p + 2] = 5;  // one value: left as it is
  }
  const std::vector<uint8_t> out = applied(AugmentOp::Equalize, 0.0, image, 30, 30);
  for (size_t p = 0; p < 900; ++p) {
    ASSERT_EQ(out[3 * p], (p < 300 ? 0 : p < 600 ? 150 : 255)) << p;
    ASSERT_EQ(out[3 * p + 1], 5);
  }
  // Fewer than 256 pixels give Pillow a step of 0: the image is kept.
  EXPECT_EQ(applied(AugmentOp::Equalize, 0.0, ramp()), ramp());
}

TEST(AugmentOps, AnEmptyImageIsLeft) {
  std::vector<uint8_t> none;
  for (const auto& [op, name] : kAugmentOpNames) {
    EXPECT_NO_THROW(apply_augment_op(op, 1.0, {none.data(), 0, 0}, nullptr)) << name;
  }
}

TEST(AugmentOps, BadMagnitudesAreRefusedNamingTheOperation) {
  std::vector<uint8_t> image = ramp(), spare(image.size());
  try {
    apply_augment_op(AugmentOp::Posterize, 9.0, {image.data(), 5, 4}, spare.data());
    FAIL() << "Posterize 9 bits ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Posterize"), std::string::npos) << e.what();
  }
  EXPECT_THROW(apply_augment_op(AugmentOp::Posterize, -1.0, {image.data(), 5, 4}, spare.data()),
               Error);
  EXPECT_THROW(
      apply_augment_op(AugmentOp::Rotate, std::nan(""), {image.data(), 5, 4}, spare.data()), Error);
  EXPECT_EQ(image, ramp());  // a refused operation leaves the image
}

}  // namespace
}  // namespace stoker
