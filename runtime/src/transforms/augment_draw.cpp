// The policies' draws (augment_draw.hpp), as torchvision's forward() of each class makes
// them, from the sample's own stream of stoker's keyed generator.
#include "transforms/augment_draw.hpp"

#include <string>

#include "stoker/common/error.hpp"
#include "transforms/counter_rng.hpp"

namespace stoker {

namespace {

// The generator's stream for the automatic augmentation (crop.cpp has 1 and 2).
constexpr uint64_t kAugmentStream = 3;

// A bin's magnitude (0.0 for the operations without), negated on a coin as torchvision does.
AugmentChoice chosen(const AugmentSpaceOp& s, int bin, bool negate) {
  double m = s.magnitudes.empty() ? 0.0 : s.magnitudes[bin];
  if (s.is_signed && negate) m = -m;
  return {s.op, m};
}

// `o`, once check_augment_policy has passed it.
AugmentPolicyOptions checked(const AugmentPolicyOptions& o) {
  check_augment_policy(o);
  return o;
}

}  // namespace

void check_augment_policy(const AugmentPolicyOptions& o) {
  if (o.policy == AugmentPolicy::TrivialAugmentWide || o.policy == AugmentPolicy::RandAugment) {
    if (o.num_magnitude_bins < 2) {
      throw Error("num_magnitude_bins=" + std::to_string(o.num_magnitude_bins),
                  "must be at least 2", "torchvision's default is 31");
    }
  }
  if (o.policy != AugmentPolicy::RandAugment) return;
  if (o.num_ops < 0) {
    throw Error("num_ops=" + std::to_string(o.num_ops), "must be 0 or more",
                "torchvision's default is 2");
  }
  if (o.magnitude < 0 || o.magnitude >= o.num_magnitude_bins) {
    throw Error("magnitude=" + std::to_string(o.magnitude),
                "must be a bin, 0.." + std::to_string(o.num_magnitude_bins - 1),
                "torchvision's default is 9 of 31 bins");
  }
}

AugmentDraw::AugmentDraw(const AugmentPolicyOptions& o, int height, int width)
    : options(checked(o)),
      space(augmentation_space(
          o.policy,
          o.policy == AugmentPolicy::TrivialAugmentWide || o.policy == AugmentPolicy::RandAugment
              ? o.num_magnitude_bins
              : default_magnitude_bins(o.policy),
          height, width)),
      subs(sub_policies(o.policy)) {}

void draw_augmentations(const AugmentDraw& d, const SampleKey& key,
                        std::vector<AugmentChoice>& out) {
  out.clear();
  CounterRng rng(key, kAugmentStream);
  const AugmentPolicy policy = d.options.policy;
  if (policy == AugmentPolicy::TrivialAugmentWide) {
    const AugmentSpaceOp& s = d.space[rng.below(d.space.size())];
    const int bin = s.magnitudes.empty() ? 0 : static_cast<int>(rng.below(s.magnitudes.size()));
    out.push_back(chosen(s, bin, rng.below(2) == 1));
  } else if (policy == AugmentPolicy::RandAugment) {
    for (int i = 0; i < d.options.num_ops; ++i) {
      const AugmentSpaceOp& s = d.space[rng.below(d.space.size())];
      out.push_back(chosen(s, d.options.magnitude, rng.below(2) == 1));
    }
  } else if (policy != AugmentPolicy::AugMix) {  // AugMix draws chains: augmix.hpp
    const SubPolicy& sub = d.subs[rng.below(d.subs.size())];
    for (const AugmentStep& step : sub) {
      const double p = rng.uniform();
      const bool negate = rng.below(2) == 0;  // torchvision negates on signs[i] == 0
      if (!(p <= step.probability)) continue;
      for (const AugmentSpaceOp& s : d.space) {
        if (s.op == step.op) out.push_back(chosen(s, step.bin < 0 ? 0 : step.bin, negate));
      }
    }
  }
}

std::vector<AugmentChoice> draw_augmentations(const AugmentPolicyOptions& o, const SampleKey& key,
                                              int height, int width) {
  std::vector<AugmentChoice> out;
  draw_augmentations(AugmentDraw(o, height, width), key, out);
  return out;
}

}  // namespace stoker
