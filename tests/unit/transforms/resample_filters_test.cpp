// The resize's filters against Pillow 9.4's own output (the numbers below are what its
// Image.resize and torchvision's Resize + CenterCrop give): bicubic's weights and its two
// passes with a clamp between them, nearest's pixel choice, and the kernels' equality on the
// two-pass path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/transforms/crop.hpp"
#include "transforms/resample.hpp"

namespace stoker {
namespace {

std::vector<int> nearest_starts(const ResampleBox& box) {
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights w = box_weights(box, starts, weights);
  EXPECT_EQ(w.h.taps, 1);
  EXPECT_EQ(w.v.taps, 1);
  for (float x : weights) EXPECT_EQ(x, 1.0f);
  return {w.h.start, w.h.start + box.out};
}

TEST(ResampleFilters, NearestSumsItsPositionAsPilDoes) {
  // 8 -> 7: output 3 sits at 3.5 * 8/7 = 4 exactly; PIL's sum of steps falls just short.
  ResampleBox box{0, 0, 8, 8, 8, 8, 7};
  box.interpolation = Interpolation::Nearest;
  EXPECT_EQ(nearest_starts(box), (std::vector<int>{0, 1, 2, 3, 5, 6, 7}));
  box = {0, 0, 122, 122, 122, 122, 7};  // and just past it: 61, where a product gives 60
  box.interpolation = Interpolation::Nearest;
  EXPECT_EQ(nearest_starts(box), (std::vector<int>{8, 26, 43, 61, 78, 95, 113}));
  box = {10, 0, 8, 8, 30, 8, 7};  // a training crop at x = 10: the same steps, shifted
  box.interpolation = Interpolation::Nearest;
  EXPECT_EQ(nearest_starts(box), (std::vector<int>{10, 11, 12, 13, 15, 16, 17}));
}

TEST(ResampleFilters, NearestEvaluationStepsFromTheWholeResize) {
  // Resize(64) of 386 x 375 is 65 x 64; CenterCrop(56) starts at column 4. PIL steps from
  // the resize's first column: its column 32 (the crop's 28) is source pixel 192, where
  // stepping from the crop's own start gives 193.
  ImageTransformOptions o;
  o.train = false;
  o.resize_shorter = 64;
  o.size = 56;
  const CropBox c = center_crop(386, 375, o);
  EXPECT_EQ(c.nearest_x.skip, 4);
  ResampleBox box{c.x, c.y, c.w, c.h, 386, 375, 56};
  box.interpolation = Interpolation::Nearest;
  box.nearest_x = c.nearest_x;
  box.nearest_y = c.nearest_y;
  const std::vector<int> starts = nearest_starts(box);
  EXPECT_EQ(starts[0], 26);
  EXPECT_EQ(starts[27], 187);
  EXPECT_EQ(starts[28], 192);
  EXPECT_EQ(starts[29], 198);
  EXPECT_EQ(starts[55], 353);
}

TEST(ResampleFilters, BicubicWeightsArePilsKernelWidenedAndNormalised) {
  // 40 -> 10: support 2 widened 4 times, so 16 taps; the lobes beyond 1 are negative.
  ResampleBox box{0, 0, 40, 40, 40, 40, 10};
  box.interpolation = Interpolation::Bicubic;
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights w = box_weights(box, starts, weights);
  EXPECT_EQ(w.h.taps, 16);
  const int i = 5;  // centre 22: pixels 14 .. 29, PIL's xmin = (int)(22 - 8 + 0.5)
  EXPECT_EQ(w.h.start[i], 14);
  auto cubic = [](double x) {  // a = -0.5
    x = std::fabs(x);
    return x < 1 ? (1.5 * x - 2.5) * x * x + 1 : x < 2 ? (((x - 5) * x + 8) * x - 4) * -0.5 : 0;
  };
  double total = 0, negative = 0;
  for (int k = 0; k < 16; ++k) total += cubic((14 + k - 22 + 0.5) / 4);
  for (int k = 0; k < 16; ++k) {
    const double want = cubic((14 + k - 22 + 0.5) / 4) / total;
    EXPECT_NEAR(w.h.weights[i * 16 + k], want, 1e-7) << k;
    negative += want < 0;
  }
  EXPECT_EQ(negative, 8);  // 1 < |x| < 2 on both sides: pixels 14-17 and 26-29
}

// Grey diagonal stripes of 0 and 255: every edge overshoots both ways.
std::vector<uint8_t> stripes(int side) {
  std::vector<uint8_t> px(static_cast<size_t>(side) * side * 3);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      uint8_t* p = &px[(static_cast<size_t>(y) * side + x) * 3];
      p[0] = p[1] = p[2] = (x * 7 + y * 3) % 5 < 2 ? 255 : 0;
    }
  }
  return px;
}

TEST(ResampleFilters, BicubicClampsBetweenItsPassesAsPil) {
  const std::vector<uint8_t> px = stripes(12);
  const DecodedRegion r{px.data(), 12 * 3, 0, 0, 12, 12};
  ResampleBox box{0, 0, 12, 12, 12, 12, 10};
  box.interpolation = Interpolation::Bicubic;
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights w = box_weights(box, starts, weights);
  // Pillow 9.4: Image.fromarray(stripes(12)).resize((10, 10), Image.BICUBIC), one channel.
  const std::vector<int> pil = {
      184, 32,  114, 110, 172, 38,  72,  136, 152, 80,  103, 154, 41,  123, 113, 158, 60,
      90,  125, 152, 139, 126, 143, 32,  109, 131, 141, 64,  92,  137, 0,   124, 127, 153,
      14,  102, 140, 141, 52,  75,  175, 17,  133, 108, 172, 9,   102, 131, 157, 41,  88,
      159, 26,  148, 97,  172, 32,  115, 113, 172, 164, 114, 142, 19,  144, 109, 154, 41,
      123, 110, 3,   141, 126, 141, 1,   133, 126, 143, 32,  115, 151, 20,  142, 114, 158,
      0,   125, 127, 153, 17,  85,  151, 22,  165, 88,  173, 11,  140, 103, 184};
  std::vector<uint8_t> two(300), one(300);
  resample_two_pass(r, w.h, w.v, false, {}, {two.data(), 10, 10, DType::U8, Layout::HWC});
  std::vector<float> work(resample_work_floats(w.h, w.v, 10));
  resample(r, w.h, w.v, false, {}, {one.data(), 10, 10, DType::U8, Layout::HWC}, work.data());
  int worst_two = 0, worst_one = 0;
  for (size_t i = 0; i < pil.size(); ++i) {
    worst_two = std::max(worst_two, std::abs(two[3 * i] - pil[i]));
    worst_one = std::max(worst_one, std::abs(one[3 * i] - pil[i]));
  }
  EXPECT_LE(worst_two, 1);  // PIL's weights are 22-bit fixed point, ours float
  EXPECT_GT(worst_one, 20) << "one fused pass clamps once, at the end";
}

TEST(ResampleFilters, TheTwoPassPathGivesTheSameBitsOnEitherKernel) {
  if (!resample_kernel_available(ResampleKernel::Avx2)) GTEST_SKIP() << "no AVX2 here";
  const std::vector<uint8_t> px = stripes(90);
  const DecodedRegion r{px.data(), 90 * 3, 0, 0, 90, 90};
  for (bool flip : {false, true}) {
    for (DType dtype : {DType::U8, DType::F32, DType::F16}) {
      ResampleBox box{3.5, 7.25, 70, 61, 90, 90, 29};
      box.interpolation = Interpolation::Bicubic;
      std::vector<int> starts;
      std::vector<float> weights;
      const BoxWeights w = box_weights(box, starts, weights);
      std::vector<float> a(29 * 29 * 3), b(a.size());
      const Normalization n{{0.02f, 0.03f, 0.01f}, {-1, -2, 0.5f}};
      resample_two_pass(r, w.h, w.v, flip, n, {a.data(), 29, 29, dtype, Layout::CHW},
                        ResampleKernel::Portable);
      resample_two_pass(r, w.h, w.v, flip, n, {b.data(), 29, 29, dtype, Layout::CHW},
                        ResampleKernel::Avx2);
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
          << to_string(dtype) << " flip " << flip;
    }
  }
}

}  // namespace
}  // namespace stoker
