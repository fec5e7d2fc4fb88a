// The policies' tables (augment_policy.cpp): their names, the operations of each space in
// torchvision's order, magnitudes torch.linspace gives, and AutoAugment's sub-policies
// (tests/python/test_augment_policy.py compares every table with torchvision's own).
#include <gtest/gtest.h>

#include <set>

#include "enum_names_check.hpp"
#include "stoker/common/error.hpp"
#include "stoker/transforms/augment_policy.hpp"

namespace stoker {
namespace {

std::vector<AugmentOp> ops_of(const std::vector<AugmentSpaceOp>& space) {
  std::vector<AugmentOp> out;
  for (const AugmentSpaceOp& s : space) out.push_back(s.op);
  return out;
}

const AugmentSpaceOp& find(const std::vector<AugmentSpaceOp>& space, AugmentOp op) {
  for (const AugmentSpaceOp& s : space) {
    if (s.op == op) return s;
  }
  throw std::runtime_error(std::string("no ") + to_string(op));
}

TEST(AugmentPolicy, NamesAreTheReferenceScriptsFlags) {
  expect_names_round_trip(
      kAugmentPolicyNames, [](AugmentPolicy p) { return to_string(p); }, parse_augment_policy);
  EXPECT_EQ(parse_augment_policy("ta_wide"), AugmentPolicy::TrivialAugmentWide);
  EXPECT_EQ(parse_augment_policy("augmix"), AugmentPolicy::AugMix);
  EXPECT_FALSE(parse_augment_policy("augmax").has_value());
}

TEST(AugmentPolicy, TrivialAugmentWideHasFourteenOperationsOfWideRanges) {
  const std::vector<AugmentSpaceOp> space =
      augmentation_space(AugmentPolicy::TrivialAugmentWide, 31, 176, 176);
  const std::vector<AugmentOp> want = {
      AugmentOp::Identity,     AugmentOp::ShearX,    AugmentOp::ShearY,     AugmentOp::TranslateX,
      AugmentOp::TranslateY,   AugmentOp::Rotate,    AugmentOp::Brightness, AugmentOp::Color,
      AugmentOp::Contrast,     AugmentOp::Sharpness, AugmentOp::Posterize,  AugmentOp::Solarize,
      AugmentOp::AutoContrast, AugmentOp::Equalize};
  EXPECT_EQ(ops_of(space), want);
  const AugmentSpaceOp& rotate = find(space, AugmentOp::Rotate);
  ASSERT_EQ(rotate.magnitudes.size(), 31u);
  EXPECT_EQ(rotate.magnitudes.front(), 0.0);
  EXPECT_EQ(rotate.magnitudes.back(), 135.0);
  EXPECT_EQ(rotate.magnitudes[15], 67.5);
  EXPECT_TRUE(rotate.is_signed);
  EXPECT_EQ(find(space, AugmentOp::ShearX).magnitudes.back(), static_cast<double>(0.99f));
  EXPECT_EQ(find(space, AugmentOp::TranslateY).magnitudes.back(), 32.0);
  // 8 - round(i / 5): 8 bits down to 2.
  const std::vector<double>& bits = find(space, AugmentOp::Posterize).magnitudes;
  EXPECT_EQ(bits.front(), 8.0);
  EXPECT_EQ(bits[2], 8.0);
  EXPECT_EQ(bits[3], 7.0);
  EXPECT_EQ(bits.back(), 2.0);
  EXPECT_FALSE(find(space, AugmentOp::Posterize).is_signed);
  const AugmentSpaceOp& solarize = find(space, AugmentOp::Solarize);
  EXPECT_EQ(solarize.magnitudes.front(), 255.0);
  EXPECT_EQ(solarize.magnitudes[1], 246.5);
  EXPECT_EQ(solarize.magnitudes.back(), 0.0);
  EXPECT_TRUE(find(space, AugmentOp::Identity).magnitudes.empty());
  EXPECT_EQ(ops_of(augmentation_space(AugmentPolicy::TrivialAugmentWide, 31, 3, 999)),
            ops_of(space));
}

TEST(AugmentPolicy, RandAugmentTranslatesByTheImagesSize) {
  const std::vector<AugmentSpaceOp> space =
      augmentation_space(AugmentPolicy::RandAugment, 31, 100, 331);
  EXPECT_EQ(space.front().op, AugmentOp::Identity);
  EXPECT_EQ(space.back().op, AugmentOp::Equalize);
  EXPECT_EQ(space.size(), 14u);
  EXPECT_EQ(find(space, AugmentOp::TranslateX).magnitudes.back(), 150.0);
  EXPECT_EQ(find(space, AugmentOp::TranslateY).magnitudes.back(),
            static_cast<double>(static_cast<float>(150.0 / 331.0 * 100)));
  EXPECT_EQ(find(space, AugmentOp::Rotate).magnitudes.back(), 30.0);
  EXPECT_EQ(find(space, AugmentOp::Posterize).magnitudes.back(), 4.0);  // 8 - round(30 / 7.5)
}

TEST(AugmentPolicy, AutoAugmentHasInvertNotIdentityAndTwentyFiveSubPolicies) {
  const std::vector<AugmentSpaceOp> space = augmentation_space(AugmentPolicy::ImageNet, 10, 8, 8);
  EXPECT_EQ(space.size(), 14u);
  EXPECT_EQ(space.front().op, AugmentOp::ShearX);
  EXPECT_EQ(space.back().op, AugmentOp::Invert);
  for (AugmentPolicy p : {AugmentPolicy::ImageNet, AugmentPolicy::Cifar10, AugmentPolicy::Svhn}) {
    EXPECT_EQ(default_magnitude_bins(p), 10);
    ASSERT_EQ(sub_policies(p).size(), 25u) << to_string(p);
    std::set<AugmentOp> in_space;
    for (const AugmentSpaceOp& s : space) in_space.insert(s.op);
    for (const SubPolicy& sub : sub_policies(p)) {
      for (const AugmentStep& step : sub) {
        EXPECT_TRUE(in_space.count(step.op)) << to_string(step.op);
        EXPECT_GE(step.probability, 0.0);
        EXPECT_LE(step.probability, 1.0);
        // A bin for exactly the operations that take a magnitude.
        EXPECT_EQ(step.bin < 0, find(space, step.op).magnitudes.empty()) << to_string(step.op);
        EXPECT_LT(step.bin, 10);
      }
    }
  }
  const SubPolicy& first = sub_policies(AugmentPolicy::ImageNet).front();
  EXPECT_EQ(first[0].op, AugmentOp::Posterize);
  EXPECT_EQ(first[0].probability, 0.4);
  EXPECT_EQ(first[0].bin, 8);
  EXPECT_EQ(first[1].op, AugmentOp::Rotate);
  EXPECT_TRUE(sub_policies(AugmentPolicy::TrivialAugmentWide).empty());
  EXPECT_TRUE(sub_policies(AugmentPolicy::RandAugment).empty());
  EXPECT_EQ(default_magnitude_bins(AugmentPolicy::RandAugment), 31);
}

TEST(AugmentPolicy, AugMixHasAllOpsWithTheEnhancementsLast) {
  const std::vector<AugmentSpaceOp> space = augmentation_space(AugmentPolicy::AugMix, 10, 90, 300);
  EXPECT_EQ(ops_of(space),
            (std::vector<AugmentOp>{AugmentOp::ShearX, AugmentOp::ShearY, AugmentOp::TranslateX,
                                    AugmentOp::TranslateY, AugmentOp::Rotate, AugmentOp::Posterize,
                                    AugmentOp::Solarize, AugmentOp::AutoContrast,
                                    AugmentOp::Equalize, AugmentOp::Brightness, AugmentOp::Color,
                                    AugmentOp::Contrast, AugmentOp::Sharpness}));
  EXPECT_EQ(find(space, AugmentOp::TranslateX).magnitudes.back(), 100.0);  // a third of 300
  EXPECT_EQ(find(space, AugmentOp::TranslateY).magnitudes.back(), 30.0);
  EXPECT_EQ(find(space, AugmentOp::Posterize).magnitudes.front(), 4.0);  // 4 - round(0 / 2.25)
  EXPECT_EQ(find(space, AugmentOp::Posterize).magnitudes[2], 3.0);
  EXPECT_EQ(find(space, AugmentOp::Sharpness).magnitudes.back(), static_cast<double>(0.9f));
  EXPECT_TRUE(find(space, AugmentOp::Equalize).magnitudes.empty());
  EXPECT_EQ(default_magnitude_bins(AugmentPolicy::AugMix), 10);
  EXPECT_TRUE(sub_policies(AugmentPolicy::AugMix).empty());
}

TEST(AugmentPolicy, TooFewBinsOrAnEmptyImageAreRefused) {
  EXPECT_THROW(augmentation_space(AugmentPolicy::RandAugment, 1, 8, 8), Error);
  EXPECT_THROW(augmentation_space(AugmentPolicy::RandAugment, 31, 0, 8), Error);
  EXPECT_NO_THROW(augmentation_space(AugmentPolicy::RandAugment, 2, 1, 1));
}

}  // namespace
}  // namespace stoker
