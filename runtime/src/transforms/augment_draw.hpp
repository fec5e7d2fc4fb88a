// What a policy (augment_policy.hpp) applies to one sample: the operations and magnitudes
// torchvision's TrivialAugmentWide, RandAugment or AutoAugment would draw, drawn from
// stoker's keyed generator (counter_rng.hpp) so that a sample's augmentation depends on its
// key only and a resumed epoch repeats it exactly. The image pipeline applies them with
// apply_augment_op (augment_ops.hpp).
#pragma once

#include <span>
#include <vector>

#include "stoker/transforms/augment_policy.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// The knobs of torchvision's policy classes (RandAugment's num_ops and magnitude; the bins
// of TrivialAugmentWide and RandAugment; AutoAugment uses 10 bins whatever is given).
struct AugmentPolicyOptions {
  AugmentPolicy policy = AugmentPolicy::TrivialAugmentWide;
  int num_ops = 2;              // RandAugment: operations per image
  int magnitude = 9;            // RandAugment: the bin of every magnitude
  int num_magnitude_bins = 31;  // TrivialAugmentWide and RandAugment
};

struct AugmentChoice {
  AugmentOp op;
  double magnitude;
};

// Throws stoker::Error naming the option when torchvision's class would refuse it or fail
// on it (RandAugment's magnitude past its bins, fewer than 2 bins, a negative num_ops).
void check_augment_policy(const AugmentPolicyOptions& o);

// A policy's tables for images of one size (RandAugment's and AutoAugment's translations
// scale with it), made once per pipeline so that a sample's draw allocates nothing.
struct AugmentDraw {
  AugmentPolicyOptions options;
  std::vector<AugmentSpaceOp> space;
  std::span<const SubPolicy> subs;
  // Checks the options (check_augment_policy) and makes the tables for height x width.
  AugmentDraw(const AugmentPolicyOptions& o, int height, int width);
};

// The operations, in order, that the policy applies to the sample `key`, into `out`
// (cleared first): TrivialAugmentWide one operation and a bin, uniformly; RandAugment
// num_ops operations at bin `magnitude`; AutoAugment a sub-policy uniformly and each of its
// steps with its probability; each signed magnitude negated with probability 1/2. An
// operation with no magnitude gets 0.0. AugMix draws none here (its chains: augmix.hpp).
void draw_augmentations(const AugmentDraw& d, const SampleKey& key,
                        std::vector<AugmentChoice>& out);
// The same for one sample, tables and all (for tests and references).
std::vector<AugmentChoice> draw_augmentations(const AugmentPolicyOptions& o, const SampleKey& key,
                                              int height, int width);

}  // namespace stoker
