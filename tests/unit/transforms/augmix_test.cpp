// AugMix (augmix.cpp): the draw's distributions over many keys (m uniform, the weights a
// Dirichlet's, depths 1..3, operations, bins and signs uniform), and the mix's float32
// arithmetic and truncation on draws given by hand. tests/python/test_augmix.py holds the
// result to torchvision's AugMix replaying stoker's draws.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/transforms/augmix.hpp"

namespace stoker {
namespace {

std::vector<AugmentSpaceOp> space() {
  return augmentation_space(AugmentPolicy::AugMix, 10, 64, 64);
}

TEST(AugMix, TheDrawIsTheKeysAndInItsRanges) {
  const std::vector<AugmentSpaceOp> s = space();
  constexpr int kKeys = 20000;
  double m_sum = 0, weight_sum[kAugMixWidth] = {};
  int depths[kAugMixMaxDepth + 1] = {}, bins[kAugMixSeverity] = {}, signed_ops = 0, negated = 0;
  std::vector<int> ops(s.size());
  for (uint64_t k = 0; k < kKeys; ++k) {
    const AugMixDraw d = draw_augmix(s, {3, 1, k});
    const AugMixDraw again = draw_augmix(s, {3, 1, k});
    ASSERT_EQ(d.m, again.m);
    ASSERT_EQ(d.weights, again.weights);
    ASSERT_GE(d.m[0], 0.0f);
    ASSERT_LE(d.m[0], 1.0f);
    EXPECT_NEAR(d.m[0] + d.m[1], 1.0, 1e-6);
    EXPECT_NEAR(d.weights[0] + d.weights[1] + d.weights[2], 1.0, 1e-6);
    m_sum += d.m[0];
    for (int i = 0; i < kAugMixWidth; ++i) {
      weight_sum[i] += d.weights[i];
      ASSERT_GE(d.depth[i], 1);
      ASSERT_LE(d.depth[i], kAugMixMaxDepth);
      ++depths[d.depth[i]];
      for (int j = 0; j < d.depth[i]; ++j) {
        const AugMixStep& step = d.chains[i][j];
        const AugmentSpaceOp& op = s[step.op_index];
        ASSERT_EQ(step.op, op.op);
        ++ops[step.op_index];
        if (!op.magnitudes.empty()) ++bins[step.bin];
        const double m = op.magnitudes.empty() ? 0.0 : op.magnitudes[step.bin];
        EXPECT_EQ(step.magnitude, step.negate ? -m : m);
        EXPECT_TRUE(op.is_signed || !step.negate);
        signed_ops += op.is_signed;
        negated += step.negate;
      }
    }
  }
  EXPECT_NEAR(m_sum / kKeys, 0.5, 0.01);  // Beta(1, 1): uniform
  for (double w : weight_sum) EXPECT_NEAR(w / kKeys, 1.0 / 3, 0.01);
  for (int depth = 1; depth <= kAugMixMaxDepth; ++depth) {
    EXPECT_NEAR(depths[depth] / (3.0 * kKeys), 1.0 / 3, 0.01) << depth;
  }
  const int steps = 3 * kKeys * 2;  // about: 3 chains of 2 operations on average
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_NEAR(ops[i] * 13.0 / steps, 1.0, 0.05) << i;
  const int with_bins = bins[0] + bins[1] + bins[2];
  for (int b : bins) EXPECT_NEAR(b * 3.0 / with_bins, 1.0, 0.03);
  EXPECT_NEAR(negated / static_cast<double>(signed_ops), 0.5, 0.01);
  const AugMixDraw other = draw_augmix(s, {3, 2, 0}), first = draw_augmix(s, {3, 1, 0});
  EXPECT_NE(other.m, first.m);  // the epoch is part of the key
}

// A draw of one-step chains, each `op` at `magnitude`.
AugMixDraw given(float m0, std::array<float, 3> weights, AugmentOp op, double magnitude) {
  AugMixDraw d{};
  d.m = {m0, 1.0f - m0};
  d.weights = weights;
  for (int i = 0; i < kAugMixWidth; ++i) {
    d.depth[i] = 1;
    d.chains[i][0] = {0, 0, false, op, magnitude};
  }
  return d;
}

TEST(AugMix, TheMixIsTorchsFloat32ThenTruncated) {
  std::vector<uint8_t> pixels(5 * 4 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 % 256);
  std::vector<uint8_t> image = pixels;
  // Solarize at 0 inverts every byte: 0.3 x + 0.7 (0.2 + 0.5 + 0.3) (255 - x), as torch does.
  const AugMixDraw d = given(0.3f, {0.2f, 0.5f, 0.3f}, AugmentOp::Solarize, 0.0);
  augmix(d, {image.data(), 5, 4}, Interpolation::Bilinear);
  for (size_t i = 0; i < pixels.size(); ++i) {
    float mix = 0.3f * static_cast<float>(pixels[i]);
    for (float w : d.weights) mix += (w * d.m[1]) * static_cast<float>(255 - pixels[i]);
    ASSERT_EQ(image[i], static_cast<uint8_t>(mix)) << i;
  }
  // All weight on the original leaves it as it was.
  image = pixels;
  augmix(given(1.0f, {0.2f, 0.5f, 0.3f}, AugmentOp::Solarize, 0.0), {image.data(), 5, 4},
         Interpolation::Nearest);
  EXPECT_EQ(image, pixels);
}

TEST(FaultsAugMix, BicubicIsRefusedNamingBothOptions) {
  std::vector<uint8_t> image(3, 0);
  try {
    augmix(given(0.5f, {1, 0, 0}, AugmentOp::Rotate, 10.0), {image.data(), 1, 1},
           Interpolation::Bicubic);
    FAIL() << "bicubic was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("auto_augment_policy=augmix"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("interpolation=bicubic"), std::string::npos);
  }
}

}  // namespace
}  // namespace stoker
