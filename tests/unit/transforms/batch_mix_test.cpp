// MixUp and CutMix of a batch (batch_mix.cpp): each function against a plain statement of
// torchvision's reference (RandomMixup, RandomCutmix) computed here on a copy of the batch,
// and the draws: Beta(alpha, alpha)'s mean and variance, RandomChoice's halves, the key alone.
#include "stoker/transforms/batch_mix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "stoker/common/error.hpp"
#include "transforms/counter_rng.hpp"
#include "transforms/half.hpp"

namespace stoker {
namespace {

constexpr int kH = 7, kW = 9;

// A batch of `n` samples of distinct values.
std::vector<float> floats(size_t n) {
  std::vector<float> v(n * 3 * kH * kW);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * 2.5f;
  return v;
}

std::byte* bytes(std::vector<float>& v) {
  return reinterpret_cast<std::byte*>(v.data());
}

MixImage image(DType t, Layout l) {
  return {t, l, kH, kW};
}

// The reference's value of element e of sample i (of n), from the unmixed batch `x`.
float mixed(const std::vector<float>& x, size_t n, size_t i, size_t e, double lambda) {
  const size_t per = 3 * kH * kW, partner = (i + n - 1) % n;
  const float a = static_cast<float>(lambda), b = static_cast<float>(1.0 - lambda);
  const float mine = x[i * per + e] * a, theirs = x[partner * per + e] * b;
  return mine + theirs;
}

TEST(BatchMix, MixUpIsTheReferencesMulAndAddWithTheRolledBatch) {
  for (size_t n : {1u, 2u, 5u}) {
    const std::vector<float> x = floats(n);
    std::vector<float> got = x, spare(3 * kH * kW);
    const MixDraw d{MixDraw::Kind::MixUp, 0.3141592653589793};
    mix_images(d, image(DType::F32, Layout::CHW), bytes(got), n, bytes(spare));
    for (size_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < 3 * kH * kW; ++e) {
        ASSERT_EQ(got[i * 3 * kH * kW + e], mixed(x, n, i, e, d.lambda))
            << "batch of " << n << ", sample " << i << ", element " << e;
      }
    }
  }
}

TEST(BatchMix, MixUpOfHalvesAndBytesMixesInFloatAndRoundsOnce) {
  const size_t n = 4, per = 3 * kH * kW;
  const std::vector<float> x = floats(n);
  std::vector<uint16_t> halves(x.size());
  std::vector<uint8_t> u8(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    halves[e] = float_to_half(x[e]);
    u8[e] = static_cast<uint8_t>(e * 37 % 256);
  }
  const MixDraw d{MixDraw::Kind::MixUp, 0.7};
  std::vector<std::byte> spare(per * 4);
  std::vector<uint16_t> h = halves;
  mix_images(d, image(DType::F16, Layout::HWC), reinterpret_cast<std::byte*>(h.data()), n,
             spare.data());
  std::vector<uint8_t> b = u8;
  mix_images(d, image(DType::U8, Layout::CHW), reinterpret_cast<std::byte*>(b.data()), n,
             spare.data());
  const float wa = 0.7f, wb = static_cast<float>(1.0 - 0.7);
  for (size_t i = 0; i < n; ++i) {
    for (size_t e = 0; e < per; ++e) {
      const size_t at = i * per + e, from = ((i + n - 1) % n) * per + e;
      const float hv = half_to_float(halves[at]) * wa + half_to_float(halves[from]) * wb;
      ASSERT_EQ(h[at], float_to_half(hv)) << "float16 sample " << i << " element " << e;
      const float bv = static_cast<float>(u8[at]) * wa + static_cast<float>(u8[from]) * wb;
      ASSERT_EQ(b[at], static_cast<uint8_t>(std::nearbyint(bv))) << "uint8 " << i << " " << e;
    }
  }
}

TEST(BatchMix, CutMixPastesThePartnersBoxInEitherLayout) {
  const size_t n = 3, per = 3 * kH * kW;
  const MixDraw d = cutmix_box(0.4, 2, 5, kH, kW);
  for (Layout l : {Layout::CHW, Layout::HWC}) {
    const std::vector<float> x = floats(n);
    std::vector<float> got = x, spare(per);
    mix_images(d, image(DType::F32, l), bytes(got), n, bytes(spare));
    for (size_t i = 0; i < n; ++i) {
      const size_t partner = (i + n - 1) % n;
      for (int c = 0; c < 3; ++c) {
        for (int y = 0; y < kH; ++y) {
          for (int xx = 0; xx < kW; ++xx) {
            const size_t e = l == Layout::CHW ? static_cast<size_t>((c * kH + y) * kW + xx)
                                              : static_cast<size_t>((y * kW + xx) * 3 + c);
            const bool inside = xx >= d.x1 && xx < d.x2 && y >= d.y1 && y < d.y2;
            ASSERT_EQ(got[i * per + e], x[(inside ? partner : i) * per + e])
                << to_string(l) << " sample " << i << " c" << c << " y" << y << " x" << xx;
          }
        }
      }
    }
  }
}

TEST(BatchMix, CutMixsBoxIsTheReferencesClampedIntegerBox) {
  for (double lambda : {0.0, 0.1, 0.5, 0.93, 1.0}) {
    for (int r_y : {0, 3, kH - 1}) {
      for (int r_x : {0, 4, kW - 1}) {
        const MixDraw d = cutmix_box(lambda, r_x, r_y, kH, kW);
        const double r = 0.5 * std::sqrt(1.0 - lambda);
        const int hw = static_cast<int>(r * kW), hh = static_cast<int>(r * kH);
        EXPECT_EQ(d.x1, std::max(r_x - hw, 0));
        EXPECT_EQ(d.y1, std::max(r_y - hh, 0));
        EXPECT_EQ(d.x2, std::min(r_x + hw, kW));
        EXPECT_EQ(d.y2, std::min(r_y + hh, kH));
        EXPECT_EQ(d.lambda, 1.0 - (d.x2 - d.x1) * (d.y2 - d.y1) / double(kW * kH));
        EXPECT_EQ(d.kind, MixDraw::Kind::CutMix);
      }
    }
  }
}

TEST(BatchMix, TargetsAreTheMixedOneHotRowsInFloat32) {
  const std::vector<int64_t> labels{3, 3, 0, 4, 1};
  const size_t classes = 6, n = labels.size();
  std::vector<float> out(n * classes, -1.0f);
  const double lambda = 0.3;
  mix_targets(lambda, labels.data(), n, classes, out.data());
  const float a = static_cast<float>(lambda), b = static_cast<float>(1.0 - lambda);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < classes; ++c) {
      const float mine = (labels[i] == static_cast<int64_t>(c) ? 1.0f : 0.0f) * a;
      const float theirs = (labels[(i + n - 1) % n] == static_cast<int64_t>(c) ? 1.0f : 0.0f) * b;
      ASSERT_EQ(out[i * classes + c], mine + theirs) << "sample " << i << " class " << c;
    }
  }
  std::vector<float> one(classes);
  mix_targets(lambda, labels.data(), 1, classes, one.data());
  EXPECT_EQ(one[3], a + b) << "a batch of one is its own partner";
}

TEST(BatchMix, BetaDrawsHaveBetasMeanAndVariance) {
  for (double alpha : {0.2, 1.0, 3.0}) {
    const int n = 40000;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) {
      CounterRng rng(SampleKey{7, 1, static_cast<uint64_t>(i)}, 99);
      const double v = beta_draw(rng, alpha);
      ASSERT_TRUE(v >= 0.0 && v <= 1.0) << v;
      sum += v;
      sq += v * v;
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    const double want_var = 1.0 / (4.0 * (2.0 * alpha + 1.0));
    // The mean's standard error is sqrt(var / n) <= 0.0022: 4 of them.
    EXPECT_NEAR(mean, 0.5, 0.009) << "alpha " << alpha;
    EXPECT_NEAR(var, want_var, 0.04 * want_var) << "alpha " << alpha;
  }
}

TEST(BatchMix, TheKeyAloneDecidesAndBothAlphasShareTheBatches) {
  ImageTransformOptions o;
  o.size = 32;
  o.mixup_alpha = 0.2;
  o.cutmix_alpha = 1.0;
  const BatchMix both(o, 10);
  int cutmix = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    const MixDraw d = both.draw({5, 2, k});
    const MixDraw again = both.draw({5, 2, k});
    ASSERT_EQ(d.lambda, again.lambda);
    ASSERT_EQ(d.x1, again.x1);
    ASSERT_EQ(d.y2, again.y2);
    cutmix += d.kind == MixDraw::Kind::CutMix;
  }
  EXPECT_NEAR(cutmix, 1000, 110);  // 1/2 each: 5 standard deviations
  EXPECT_NE(both.draw({5, 2, 0}).lambda, both.draw({5, 3, 0}).lambda);
  o.cutmix_alpha = 0;
  const BatchMix mixup(o, 10);
  for (uint64_t k = 0; k < 50; ++k) EXPECT_EQ(mixup.draw({5, 2, k}).kind, MixDraw::Kind::MixUp);
}

TEST(BatchMix, NoClassCountIsAnErrorNamingNumClasses) {
  ImageTransformOptions o;
  o.mixup_alpha = 0.2;
  try {
    BatchMix mix(o, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "num_classes");
  }
}

}  // namespace
}  // namespace stoker
