// The policies' draws (augment_draw.cpp): a pure function of the sample's key, the
// operations and magnitudes of each policy's tables, in torchvision's proportions.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "stoker/common/error.hpp"
#include "transforms/augment_draw.hpp"

namespace stoker {
namespace {

bool same(const std::vector<AugmentChoice>& a, const std::vector<AugmentChoice>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].op != b[i].op || a[i].magnitude != b[i].magnitude) return false;
  }
  return true;
}

// Whether `m` is a magnitude of `op` in `space`, either sign when the operation is signed.
bool in_space(const std::vector<AugmentSpaceOp>& space, AugmentOp op, double m) {
  for (const AugmentSpaceOp& s : space) {
    if (s.op != op) continue;
    if (s.magnitudes.empty()) return m == 0.0;
    for (double v : s.magnitudes) {
      if (m == v || (s.is_signed && m == -v)) return true;
    }
  }
  return false;
}

TEST(AugmentDraw, TheKeyAloneDecides) {
  for (AugmentPolicy p :
       {AugmentPolicy::TrivialAugmentWide, AugmentPolicy::RandAugment, AugmentPolicy::ImageNet}) {
    const AugmentPolicyOptions o{p};
    int differ = 0;
    for (uint64_t i = 0; i < 64; ++i) {
      const std::vector<AugmentChoice> a = draw_augmentations(o, {7, 1, i}, 176, 176);
      ASSERT_TRUE(same(a, draw_augmentations(o, {7, 1, i}, 176, 176))) << to_string(p);
      differ += !same(a, draw_augmentations(o, {7, 2, i}, 176, 176));
    }
    EXPECT_GT(differ, 32) << to_string(p) << ": another epoch draws anew";
  }
}

TEST(AugmentDraw, TrivialAugmentWideDrawsEveryOperationAndBinAlike) {
  const AugmentPolicyOptions o{AugmentPolicy::TrivialAugmentWide};
  const std::vector<AugmentSpaceOp> space = augmentation_space(o.policy, 31, 176, 176);
  std::map<AugmentOp, int> ops;
  int negative = 0, signed_draws = 0;
  const int n = 14000;
  for (int i = 0; i < n; ++i) {
    const std::vector<AugmentChoice> d = draw_augmentations(o, {1, 0, uint64_t(i)}, 176, 176);
    ASSERT_EQ(d.size(), 1u);
    ASSERT_TRUE(in_space(space, d[0].op, d[0].magnitude)) << to_string(d[0].op);
    ++ops[d[0].op];
    if (d[0].op == AugmentOp::Rotate && d[0].magnitude != 0) {
      ++signed_draws;
      negative += d[0].magnitude < 0;
    }
  }
  ASSERT_EQ(ops.size(), 14u);
  for (const auto& [op, count] : ops) {
    EXPECT_NEAR(count, n / 14, n / 14 / 4) << to_string(op);  // 1000 each, give or take
  }
  EXPECT_NEAR(negative, signed_draws / 2, signed_draws / 6);
}

TEST(AugmentDraw, RandAugmentUsesItsOneBinForEachOperation) {
  AugmentPolicyOptions o{AugmentPolicy::RandAugment};
  o.num_ops = 3;
  o.magnitude = 30;
  const std::vector<AugmentSpaceOp> space = augmentation_space(o.policy, 31, 64, 99);
  for (uint64_t i = 0; i < 200; ++i) {
    const std::vector<AugmentChoice> d = draw_augmentations(o, {3, 0, i}, 64, 99);
    ASSERT_EQ(d.size(), 3u);
    for (const AugmentChoice& c : d) {
      for (const AugmentSpaceOp& s : space) {
        if (s.op != c.op) continue;
        const double want = s.magnitudes.empty() ? 0.0 : s.magnitudes[30];
        ASSERT_TRUE(c.magnitude == want || (s.is_signed && c.magnitude == -want))
            << to_string(c.op) << " " << c.magnitude;
      }
    }
  }
  o.num_ops = 0;
  EXPECT_TRUE(draw_augmentations(o, {3, 0, 0}, 64, 99).empty());
}

TEST(AugmentDraw, AutoAugmentFollowsOneSubPolicyInOrder) {
  const AugmentPolicyOptions o{AugmentPolicy::Svhn};
  const std::vector<AugmentSpaceOp> space = augmentation_space(o.policy, 10, 32, 32);
  size_t steps = 0;
  for (uint64_t i = 0; i < 500; ++i) {
    const std::vector<AugmentChoice> d = draw_augmentations(o, {5, 0, i}, 32, 32);
    ASSERT_LE(d.size(), 2u);
    bool found = false;  // some sub-policy holds these operations in this order
    for (const SubPolicy& sub : sub_policies(o.policy)) {
      const bool both = d.size() == 2 && d[0].op == sub[0].op && d[1].op == sub[1].op;
      const bool one = d.size() == 1 && (d[0].op == sub[0].op || d[0].op == sub[1].op);
      found = found || d.empty() || both || one;
    }
    ASSERT_TRUE(found) << i;
    for (const AugmentChoice& c : d) ASSERT_TRUE(in_space(space, c.op, c.magnitude));
    steps += d.size();
  }
  EXPECT_GT(steps, 300u);  // SVHN's steps apply with probability 0.58 on average
}

TEST(AugmentDraw, OptionsTorchvisionRefusesAreRefused) {
  AugmentPolicyOptions o{AugmentPolicy::RandAugment};
  o.magnitude = 31;  // past 31 bins: torchvision's IndexError
  EXPECT_THROW(check_augment_policy(o), Error);
  o.magnitude = 9;
  o.num_ops = -1;
  EXPECT_THROW(check_augment_policy(o), Error);
  o.num_ops = 2;
  o.num_magnitude_bins = 1;
  EXPECT_THROW(draw_augmentations(o, {0, 0, 0}, 8, 8), Error);
  EXPECT_NO_THROW(check_augment_policy(AugmentPolicyOptions{AugmentPolicy::ImageNet}));
}

}  // namespace
}  // namespace stoker
