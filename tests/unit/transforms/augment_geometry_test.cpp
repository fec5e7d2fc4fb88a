// The geometric augmentations (augment_geometry.cpp): flips and Image.rotate's exact turns,
// and bytes Pillow 9.4 gave through torchvision's _apply_op on a small image whose every
// byte is different, for each sampling path (nearest by scale, in 16.16 fixed point and in
// doubles; bilinear; bicubic) and a fill.
#include <gtest/gtest.h>

#include <vector>

#include "stoker/transforms/augment_ops.hpp"
#include "transforms/augment_geometry.hpp"

namespace stoker {
namespace {

// 5 x 4 pixels, byte i = 13 * i mod 256.
std::vector<uint8_t> ramp(int width = 5, int height = 4) {
  std::vector<uint8_t> v(static_cast<size_t>(width) * height * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 13 % 256);
  return v;
}

std::vector<uint8_t> applied(AugmentOp op, double magnitude, Interpolation interpolation,
                             Fill fill = {0, 0, 0}, int width = 5, int height = 4) {
  std::vector<uint8_t> pixels = ramp(width, height), spare(pixels.size());
  apply_augment_op(op, magnitude, {pixels.data(), width, height}, spare.data(), interpolation,
                   fill);
  return pixels;
}

// The pixel at (x, y) of a `width` wide image.
std::vector<uint8_t> pixel(const std::vector<uint8_t>& v, int width, int x, int y) {
  const auto at = v.begin() + (static_cast<size_t>(y) * width + x) * 3;
  return {at, at + 3};
}

TEST(AugmentGeometry, FlipsMirrorAndUndoThemselves) {
  const std::vector<uint8_t> image = ramp();
  const std::vector<uint8_t> h = applied(AugmentOp::HorizontalFlip, 0, Interpolation::Nearest);
  const std::vector<uint8_t> v = applied(AugmentOp::VerticalFlip, 0, Interpolation::Nearest);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 5; ++x) {
      ASSERT_EQ(pixel(h, 5, x, y), pixel(image, 5, 4 - x, y));
      ASSERT_EQ(pixel(v, 5, x, y), pixel(image, 5, x, 3 - y));
    }
  }
  std::vector<uint8_t> twice = h, spare(h.size());
  flip_op(true, {twice.data(), 5, 4}, spare.data());
  EXPECT_EQ(twice, image);
}

TEST(AugmentGeometry, HalfTurnsAndWholeTurnsAreExactWhateverTheFilter) {
  for (Interpolation i :
       {Interpolation::Nearest, Interpolation::Bilinear, Interpolation::Bicubic}) {
    const std::vector<uint8_t> half = applied(AugmentOp::Rotate, 180.0, i);
    const std::vector<uint8_t> minus = applied(AugmentOp::Rotate, -180.0, i);
    EXPECT_EQ(half, minus);
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 5; ++x) ASSERT_EQ(pixel(half, 5, x, y), pixel(ramp(), 5, 4 - x, 3 - y));
    }
    EXPECT_EQ(applied(AugmentOp::Rotate, 720.0, i), ramp());
  }
  // A quarter turn of a square image is a transpose; counter-clockwise as PIL turns.
  const std::vector<uint8_t> quarter =
      applied(AugmentOp::Rotate, 90.0, Interpolation::Bicubic, {0, 0, 0}, 3, 3);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 3; ++x) ASSERT_EQ(pixel(quarter, 3, y, 2 - x), pixel(ramp(3, 3), 3, x, y));
  }
}

TEST(AugmentGeometry, RotateNearestInFixedPoint) {
  const std::vector<uint8_t> want = {0,   0,   0,   78,  91,  104, 117, 130, 143, 95,  108, 121,
                                     95,  108, 121, 39,  52,  65,  234, 247, 4,   17,  30,  43,
                                     251, 8,   21,  34,  47,  60,  195, 208, 221, 234, 247, 4,
                                     212, 225, 238, 251, 8,   21,  190, 203, 216, 134, 147, 160,
                                     134, 147, 160, 112, 125, 138, 151, 164, 177, 0,   0,   0};
  EXPECT_EQ(applied(AugmentOp::Rotate, 30.0, Interpolation::Nearest), want);
  // A quarter turn of a 5 x 4 image is no transpose: Pillow samples it, corners filled.
  const std::vector<uint8_t> quarter = {156, 169, 182, 95,  108, 121, 34,  47,  60,  229, 242, 255,
                                        0,   0,   0,   117, 130, 143, 56,  69,  82,  251, 8,   21,
                                        190, 203, 216, 0,   0,   0,   78,  91,  104, 17,  30,  43,
                                        212, 225, 238, 151, 164, 177, 0,   0,   0,   39,  52,  65,
                                        234, 247, 4,   173, 186, 199, 112, 125, 138, 0,   0,   0};
  EXPECT_EQ(applied(AugmentOp::Rotate, 90.0, Interpolation::Nearest), quarter);
}

TEST(AugmentGeometry, ShearYNearestAroundTheCorner) {
  const std::vector<uint8_t> want = {0,   13,  26,  0,   0,   0,   0,   0,   0,   0,   0,   0,
                                     0,   0,   0,   195, 208, 221, 39,  52,  65,  78,  91,  104,
                                     117, 130, 143, 0,   0,   0,   134, 147, 160, 234, 247, 4,
                                     17,  30,  43,  56,  69,  82,  156, 169, 182, 73,  86,  99,
                                     173, 186, 199, 212, 225, 238, 251, 8,   21,  95,  108, 121};
  EXPECT_EQ(applied(AugmentOp::ShearY, -0.4, Interpolation::Nearest), want);
}

TEST(AugmentGeometry, TranslateTruncatesTheShiftAndFills) {
  const std::vector<uint8_t> want = {200, 100, 50,  200, 100, 50,  0,   13,  26,  39,  52,  65,
                                     78,  91,  104, 200, 100, 50,  200, 100, 50,  195, 208, 221,
                                     234, 247, 4,   17,  30,  43,  200, 100, 50,  200, 100, 50,
                                     134, 147, 160, 173, 186, 199, 212, 225, 238, 200, 100, 50,
                                     200, 100, 50,  73,  86,  99,  112, 125, 138, 151, 164, 177};
  EXPECT_EQ(applied(AugmentOp::TranslateX, 2.7, Interpolation::Bilinear, {200, 100, 50}), want);
  // A shift past the image (the double path: fixed point would overflow) leaves only fill.
  for (uint8_t v : applied(AugmentOp::TranslateY, -1e12, Interpolation::Nearest, {7, 7, 7})) {
    ASSERT_EQ(v, 7);
  }
}

TEST(AugmentGeometry, ShearXBicubic) {
  const std::vector<uint8_t> want = {
      5,  18, 31, 48, 61, 74,  87,  100, 113, 127, 140, 153, 160, 173, 186, 236, 249, 119, 137, 150,
      0,  0,  13, 61, 78, 91,  104, 100, 113, 126, 157, 170, 183, 198, 247, 255, 255, 58,  71,  90,
      27, 40, 0,  0,  0,  115, 128, 141, 154, 167, 180, 193, 206, 219, 230, 243, 255, 0,   0,   0};
  EXPECT_EQ(applied(AugmentOp::ShearX, 0.3, Interpolation::Bicubic), want);
}

TEST(AugmentGeometry, RotateBilinearAndBicubicWithAFill) {
  const std::vector<uint8_t> bilinear = {
      126, 139, 152, 93,  106, 63,  64,  77,  82,  98,  111, 124, 9,   99,  199,
      157, 170, 183, 210, 223, 79,  52,  65,  41,  65,  78,  91,  120, 133, 146,
      108, 121, 134, 163, 176, 189, 213, 189, 202, 175, 31,  44,  71,  84,  97,
      9,   99,  199, 130, 143, 156, 172, 177, 190, 191, 148, 161, 102, 115, 128};
  EXPECT_EQ(applied(AugmentOp::Rotate, -17.0, Interpolation::Bilinear, {9, 99, 199}), bilinear);
  const std::vector<uint8_t> bicubic = {// 1000 degrees: Python's modulo, 280
                                        70,  83,  96,  119, 132, 160, 255, 255, 131, 85,  98,  46,
                                        1,   2,   3,   112, 125, 138, 168, 195, 238, 167, 197, 95,
                                        59,  68,  28,  1,   2,   3,   1,   2,   3,   226, 186, 195,
                                        159, 57,  87,  16,  59,  86,  116, 129, 142, 1,   2,   3,
                                        208, 156, 169, 123, 0,   0,   94,  122, 135, 158, 171, 184};
  EXPECT_EQ(applied(AugmentOp::Rotate, 1000.0, Interpolation::Bicubic, {1, 2, 3}), bicubic);
}

}  // namespace
}  // namespace stoker
