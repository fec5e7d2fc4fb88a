// The training pass with an automatic augmentation or random erasing (augment_pass.cpp,
// through make_image_transform): the policy's draw applied to the same crop and flip, the
// bytes normalised as the fused pass would, erasing as a box of zeros, all by the key alone.
#include <gtest/gtest.h>

#include <cstring>

#include "image_fixtures.hpp"
#include "stoker/common/error.hpp"
#include "stoker/transforms/augment_ops.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/augment_draw.hpp"

namespace stoker {
namespace {

std::vector<uint8_t> run(const ImageTransformOptions& o, const std::vector<std::byte>& jpeg,
                         SampleKey key) {
  const auto t = make_image_transform(o);
  std::vector<uint8_t> out(t->output_spec().bytes());
  Scratch scratch;
  StageTimes times;
  t->apply({jpeg, 3}, key, reinterpret_cast<std::byte*>(out.data()), scratch, times);
  return out;
}

ImageTransformOptions bytes_out(int size = 64) {
  ImageTransformOptions o;
  o.size = size;
  o.dtype = DType::U8;
  o.layout = Layout::HWC;
  return o;
}

class AugmentPassTest : public ::testing::Test {
 protected:
  std::vector<std::byte> jpeg = test::test_jpeg(200, 150, 47);
};

TEST_F(AugmentPassTest, EachPolicyAppliesItsDrawToTheSameCropAndFlip) {
  for (AugmentPolicy p :
       {AugmentPolicy::TrivialAugmentWide, AugmentPolicy::RandAugment, AugmentPolicy::ImageNet}) {
    ImageTransformOptions o = bytes_out();
    o.auto_augment_policy = p;
    o.ra_magnitude = 13;
    int changed = 0;
    for (uint64_t i = 0; i < 24; ++i) {
      const SampleKey key{11, 2, i};
      std::vector<uint8_t> want = run(bytes_out(), jpeg, key), spare(want.size());
      AugmentPolicyOptions draw{p};
      draw.magnitude = 13;
      for (const AugmentChoice& c : draw_augmentations(draw, key, 64, 64)) {
        apply_augment_op(c.op, c.magnitude, {want.data(), 64, 64}, spare.data(),
                         Interpolation::Bilinear);
      }
      const std::vector<uint8_t> got = run(o, jpeg, key);
      ASSERT_EQ(got, want) << to_string(p) << " sample " << i;
      changed += got != run(bytes_out(), jpeg, key);
      EXPECT_EQ(got, run(o, jpeg, key)) << "the key alone decides";
    }
    EXPECT_GT(changed, 8) << to_string(p);
  }
}

TEST_F(AugmentPassTest, TheAugmentedBytesAreNormalisedAsTheFusedPassWould) {
  ImageTransformOptions o = bytes_out(32);
  o.auto_augment_policy = AugmentPolicy::TrivialAugmentWide;
  const std::vector<uint8_t> bytes = run(o, jpeg, {3, 0, 9});
  o.dtype = DType::F32;
  o.layout = Layout::CHW;
  const std::vector<uint8_t> out = run(o, jpeg, {3, 0, 9});
  const float* f = reinterpret_cast<const float*>(out.data());
  for (int c = 0; c < 3; ++c) {
    for (int p = 0; p < 32 * 32; ++p) {
      const float want = (bytes[3 * p + c] / 255.0f - o.mean[c]) / o.std[c];
      ASSERT_NEAR(f[c * 32 * 32 + p], want, 1e-5f) << c << " " << p;
    }
  }
}

TEST_F(AugmentPassTest, RandomErasingZeroesOneBoxOfTheRightSize) {
  ImageTransformOptions o = bytes_out();
  o.random_erase_prob = 1.0;
  int erased = 0;
  for (uint64_t i = 0; i < 40; ++i) {
    const std::vector<uint8_t> plain = run(bytes_out(), jpeg, {5, 0, i});
    const std::vector<uint8_t> got = run(o, jpeg, {5, 0, i});
    int top = 64, bottom = -1, left = 64, right = -1;
    for (int y = 0; y < 64; ++y) {
      for (int x = 0; x < 64; ++x) {
        if (std::memcmp(&got[(y * 64 + x) * 3], &plain[(y * 64 + x) * 3], 3) == 0) continue;
        top = std::min(top, y), bottom = std::max(bottom, y);
        left = std::min(left, x), right = std::max(right, x);
      }
    }
    if (bottom < 0) continue;  // ten tries without a fitting box, or a box over zeros
    ++erased;
    for (int y = top; y <= bottom; ++y) {
      for (int x = left; x <= right; ++x) ASSERT_EQ(got[(y * 64 + x) * 3 + 1], 0) << i;
    }
    const double area = double(bottom - top + 1) * (right - left + 1) / (64.0 * 64.0);
    EXPECT_LE(area, 0.36) << i;  // 0.33 of the image, and the rounding of its sides
  }
  EXPECT_GT(erased, 30);
  o.random_erase_prob = 0.0;
  EXPECT_EQ(run(o, jpeg, {5, 0, 1}), run(bytes_out(), jpeg, {5, 0, 1}));
}

TEST_F(AugmentPassTest, EvaluationNeitherAugmentsNorErases) {
  ImageTransformOptions o = bytes_out();
  o.train = false;
  o.resize_shorter = 64;
  const std::vector<uint8_t> plain = run(o, jpeg, {1, 0, 0});
  o.auto_augment_policy = AugmentPolicy::TrivialAugmentWide;
  o.random_erase_prob = 1.0;
  EXPECT_EQ(run(o, jpeg, {1, 0, 0}), plain);
}

TEST_F(AugmentPassTest, OptionsOutOfRangeAreRefused) {
  ImageTransformOptions o;
  o.ra_magnitude = 31;
  EXPECT_THROW(make_image_transform(o), Error);
  o.ra_magnitude = 9;
  o.random_erase_prob = 1.5;
  EXPECT_THROW(make_image_transform(o), Error);
  o.random_erase_prob = 0.1;
  o.auto_augment_policy = AugmentPolicy::Cifar10;
  EXPECT_NE(make_image_transform(o)->describe().find("auto_augment cifar10 + Normalize + "
                                                     "RandomErasing(p=0.1)"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker
