// The bilinear affine sampler four pixels at a time (augment_affine_avx2.cpp) against the one
// pixel at a time (augment_geometry.cpp, held to Pillow's bytes by augment_geometry_test.cpp
// and python.augment_ops): the same bytes for rotations, shears and maps partly or wholly
// outside the image, on sizes that leave 0 to 3 pixels past the last group of four.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "transforms/augment_geometry.hpp"

namespace stoker {
namespace {

std::vector<uint8_t> noise(int w, int h, std::mt19937& rng) {
  std::vector<uint8_t> v(static_cast<size_t>(w) * h * 3);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint8_t> sampled(const std::vector<uint8_t>& in, int w, int h, const AffineMatrix& a,
                             ResampleKernel kernel) {
  std::vector<uint8_t> out(in.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(7 + i % 3);  // a fill
  bilinear_affine(in.data(), w, h, out.data(), a, kernel);
  return out;
}

TEST(AugmentAffineKernels, Avx2AndPortableGiveTheSameBytes) {
  if (!resample_kernel_available(ResampleKernel::Avx2)) {
    GTEST_SKIP() << "this CPU or build has no AVX2 kernel; the portable one runs everywhere";
  }
  std::mt19937 rng(47);
  const int sizes[][2] = {{2, 1}, {1, 3}, {3, 3}, {5, 4}, {37, 23}, {64, 64}, {176, 176}};
  std::vector<AffineMatrix> maps;
  for (double angle = -31; angle <= 31; angle += 2.5) {
    maps.push_back(inverse_affine(0, 0, angle, 0, 0, 0, 0));  // the centre added per size below
  }
  for (double shear : {-16.7, -9.0, -0.3, 0.3, 9.0, 16.7}) {
    maps.push_back(inverse_affine(0, 0, 0, 0, 0, shear, 0));
    maps.push_back(inverse_affine(0, 0, 0, 0, 0, 0, shear));
  }
  maps.push_back({1, 0, 0.25, 0, 1, -0.75});       // fractions, no turn
  maps.push_back({1, 0, 1e12, 0, 1, 0});           // wholly outside, past int's range
  maps.push_back({-1.5, 0.2, 30, 0.1, -0.7, 20});  // mirrored and stretched, partly outside
  for (const auto& [w, h] : sizes) {
    const std::vector<uint8_t> in = noise(w, h, rng);
    for (AffineMatrix a : maps) {
      const double cx = w * 0.5, cy = h * 0.5;  // about the centre, as Rotate turns
      if (a[0] != 1 || a[4] != 1) {
        a[2] += cx - a[0] * cx - a[1] * cy;
        a[5] += cy - a[3] * cx - a[4] * cy;
      }
      ASSERT_EQ(sampled(in, w, h, a, ResampleKernel::Avx2),
                sampled(in, w, h, a, ResampleKernel::Portable))
          << w << " x " << h << " map " << a[0] << " " << a[1] << " " << a[2] << " " << a[3] << " "
          << a[4] << " " << a[5];
    }
  }
}

}  // namespace
}  // namespace stoker
