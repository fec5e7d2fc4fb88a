// Crop parameters: torchvision's RandomResizedCrop rules, driven only by SampleKey.
#include <gtest/gtest.h>

#include <cmath>

#include "enum_names_check.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/counter_rng.hpp"
#include "transforms/half.hpp"

namespace stoker {
namespace {

TEST(CounterRng, IsAPureFunctionOfKeyStreamAndDrawNumber) {
  CounterRng a({1, 2, 3}, 0), b({1, 2, 3}, 0), c({1, 2, 4}, 0), d({1, 2, 3}, 1);
  const uint64_t first = a.next();
  EXPECT_EQ(first, b.next());
  EXPECT_NE(first, c.next());
  EXPECT_NE(first, d.next());
  EXPECT_NE(a.next(), first);
  double sum = 0;
  CounterRng u({9, 9, 9}, 0);
  for (int i = 0; i < 20000; ++i) {
    const double x = u.uniform();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 20000, 0.5, 0.01);
  for (int i = 0; i < 1000; ++i) ASSERT_LT(u.below(7), 7u);
}

TEST(RandomResizedCrop, SameKeySameCropAndEpochOrIndexChangesIt) {
  ImageTransformOptions o;
  const CropBox a = random_resized_crop(500, 375, {42, 0, 17}, o);
  EXPECT_EQ(a, random_resized_crop(500, 375, {42, 0, 17}, o));
  EXPECT_FALSE(a == random_resized_crop(500, 375, {42, 1, 17}, o));
  EXPECT_FALSE(a == random_resized_crop(500, 375, {42, 0, 18}, o));
  EXPECT_FALSE(a == random_resized_crop(500, 375, {43, 0, 17}, o));
}

TEST(RandomResizedCrop, DistributionMatchesTorchvisionsRules) {
  ImageTransformOptions o;
  const int w = 400, h = 400, n = 20000;  // square: accepted ratios stay symmetric
  double sum_log_ratio = 0, sum_area = 0;
  int full_width = 0;
  for (int i = 0; i < n; ++i) {
    const CropBox b = random_resized_crop(w, h, {7, 3, static_cast<uint64_t>(i)}, o);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.w, w);
    ASSERT_LE(b.y + b.h, h);
    ASSERT_EQ(b.x, std::floor(b.x));  // integer crops, as torchvision's
    const double area = b.w * b.h / (w * h);
    ASSERT_GE(area, 0.07);  // 0.08 less rounding
    sum_area += area;
    sum_log_ratio += std::log(b.w / b.h);
    full_width += b.w == w;
  }
  // Accepted draws: log-ratio symmetric around 0; areas uniform in [0.08, 1] less the large
  // ones rejected for not fitting, so the mean area sits below 0.54.
  EXPECT_NEAR(sum_log_ratio / n, 0.0, 0.02);
  EXPECT_GT(sum_area / n, 0.35);
  EXPECT_LT(sum_area / n, 0.54);
  EXPECT_LT(full_width, n / 10);
}

TEST(RandomResizedCrop, FallsBackToACentredCropWithinTheRatio) {
  ImageTransformOptions o;
  o.scale_min = o.scale_max = 1.0;  // the whole area: no 10:1 image can host a 4:3 crop
  const CropBox b = random_resized_crop(1000, 100, {1, 2, 3}, o);
  EXPECT_EQ(b.h, 100);
  EXPECT_EQ(b.w, std::nearbyint(100 * 4.0 / 3.0));
  EXPECT_EQ(b.x, (1000 - b.w) / 2 - std::fmod((1000 - b.w) / 2, 1.0));
  EXPECT_EQ(b.y, 0);
}

TEST(CenterCrop, MatchesResize256ThenCenterCrop224) {
  ImageTransformOptions o;
  o.train = false;
  // 500x375 -> Resize(256) -> 341x256 -> CenterCrop(224): left round(58.5)=58, top 16.
  const CropBox b = center_crop(500, 375, o);
  const double s = 375.0 / 256.0;
  EXPECT_NEAR(b.x, 58 * (500.0 / 341.0), 1e-9);
  EXPECT_NEAR(b.y, 16 * s, 1e-9);
  EXPECT_NEAR(b.w, 224 * (500.0 / 341.0), 1e-9);
  EXPECT_NEAR(b.h, 224 * s, 1e-9);
}

TEST(RandomFlip, IsKeyedAndFair) {
  ImageTransformOptions o;
  int flips = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    const bool f = random_flip({5, 1, i}, o);
    ASSERT_EQ(f, random_flip({5, 1, i}, o));
    flips += f;
  }
  EXPECT_NEAR(flips / 10000.0, 0.5, 0.03);
  o.train = false;
  EXPECT_FALSE(random_flip({5, 1, 0}, o));
}

TEST(Half, RoundTripsAndRounds) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.1f, 65504.0f, 6.1e-5f, 3e-7f, -1e-3f}) {
    EXPECT_NEAR(half_to_float(float_to_half(f)), f, std::fabs(f) * 1e-3 + 6e-8) << f;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);  // a tie rounds to even
}

TEST(Layout, NamesReadBothWays) {
  expect_names_round_trip(
      kLayoutNames, [](Layout l) { return to_string(l); }, parse_layout);
}

}  // namespace
}  // namespace stoker
