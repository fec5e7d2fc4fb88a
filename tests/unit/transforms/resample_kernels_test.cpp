// The AVX2 resample kernel against the portable one: the same bytes for every dtype, layout,
// flip, tap count and output width (multiples of 8 and not), and nothing written past the
// output.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "stoker/common/error.hpp"
#include "transforms/resample.hpp"

namespace stoker {
namespace {

struct Case {
  int in_w, in_h;         // decoded region (the whole image here)
  double bx, by, bw, bh;  // the crop box
  int out;                // output width and height
  bool antialias;
};

// Runs one kernel over `px` and returns the output bytes followed by 64 canary bytes.
std::vector<uint8_t> run(const std::vector<uint8_t>& px, const Case& c, bool flip, DType dtype,
                         Layout layout, ResampleKernel kernel) {
  const DecodedRegion r{px.data(), static_cast<size_t>(c.in_w) * 3, 0, 0, c.in_w, c.in_h};
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights axes =
      box_weights({c.bx, c.by, c.bw, c.bh, c.in_w, c.in_h, c.out, c.antialias}, starts, weights);
  std::vector<float> work(resample_work_floats(axes.h, axes.v, c.out, kernel));
  const size_t bytes = static_cast<size_t>(c.out) * c.out * 3 * dtype_size(dtype);
  std::vector<uint8_t> out(bytes + 64, 0xa5);
  Normalization norm;  // ImageNet's mean and std: negative and positive outputs
  norm.scale = {1 / (255 * 0.229f), 1 / (255 * 0.224f), 1 / (255 * 0.225f)};
  norm.bias = {-0.485f / 0.229f, -0.456f / 0.224f, -0.406f / 0.225f};
  resample(r, axes.h, axes.v, flip, norm, {out.data(), c.out, c.out, dtype, layout}, work.data(),
           kernel);
  return out;
}

TEST(ResampleKernels, Avx2AndPortableGiveTheSameBytes) {
  if (!resample_kernel_available(ResampleKernel::Avx2)) {
    GTEST_SKIP() << "this CPU or build has no AVX2 kernel; the portable one runs everywhere";
  }
  std::mt19937 rng(7);
  std::vector<uint8_t> px(640 * 480 * 3);
  for (auto& b : px) b = static_cast<uint8_t>(rng());
  const Case cases[] = {
      {640, 480, 40.5, 30.25, 448.0, 400.0, 224, true},  // 2x down: 5 taps
      {640, 480, 100, 50, 300, 280, 224, true},          // 1.3x down: 3-4 taps
      {640, 480, 0, 0, 640, 480, 37, true},              // 17x down, odd width: generic taps
      {640, 480, 10, 20, 100, 90, 224, true},            // upscale: 2 taps
      {640, 480, 3, 7, 500, 470, 61, false},             // no antialias
      {640, 480, 200, 100, 64, 64, 8, true},             // one group of 8
      {640, 480, 200, 100, 20, 20, 5, true},             // narrower than a group
      {640, 480, 600, 440, 40, 40, 1, true},             // one pixel
  };
  for (const Case& c : cases) {
    for (bool flip : {false, true}) {
      for (DType d : {DType::F32, DType::F16, DType::U8}) {
        for (Layout l : {Layout::CHW, Layout::HWC}) {
          const auto portable = run(px, c, flip, d, l, ResampleKernel::Portable);
          const auto avx2 = run(px, c, flip, d, l, ResampleKernel::Avx2);
          const size_t bytes = avx2.size() - 64;
          const auto differ = std::mismatch(portable.begin(), portable.end(), avx2.begin());
          ASSERT_TRUE(differ.first == portable.end())
              << "out " << c.out << " flip " << flip << " " << to_string(d) << " " << to_string(l)
              << ": first different byte at " << differ.first - portable.begin() << " of " << bytes;
          for (size_t i = bytes; i < avx2.size(); ++i) {
            ASSERT_EQ(avx2[i], 0xa5) << "written past the output at +" << i - bytes;
          }
        }
      }
    }
  }
}

TEST(ResampleKernels, TheBestKernelIsOneThisCpuRuns) {
  EXPECT_TRUE(resample_kernel_available(best_resample_kernel()));
  EXPECT_TRUE(resample_kernel_available(ResampleKernel::Portable));
}

TEST(ResampleKernels, StokerSimdChoosesOrIsANamedError) {
  EXPECT_EQ(resample_kernel_from(std::nullopt), best_resample_kernel());
  EXPECT_EQ(resample_kernel_from("auto"), best_resample_kernel());
  EXPECT_EQ(resample_kernel_from("portable"), ResampleKernel::Portable);
  if (resample_kernel_available(ResampleKernel::Avx2)) {
    EXPECT_EQ(resample_kernel_from("avx2"), ResampleKernel::Avx2);
  } else {
    EXPECT_THROW(resample_kernel_from("avx2"), Error);
  }
  try {
    resample_kernel_from("sse9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "STOKER_SIMD");
    EXPECT_NE(e.problem().find("'sse9'"), std::string::npos);
  }
}

}  // namespace
}  // namespace stoker
