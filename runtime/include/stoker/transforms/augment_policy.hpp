// torchvision's automatic augmentation policies as tables: which operations each may draw,
// the magnitude of each bin and whether it is negated half the time (torchvision's
// _augmentation_space), and AutoAugment's learned sub-policies (_get_policies), by the
// reference scripts' names (--auto-augment). The operations are augment_ops.hpp's.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "stoker/common/enum_names.hpp"
#include "stoker/transforms/augment_data.hpp"

namespace stoker {

// TrivialAugmentWide, RandAugment, AutoAugment with its ImageNet, CIFAR-10 and SVHN
// policies, and AugMix (its draw and mix are augmix.hpp's).
enum class AugmentPolicy { TrivialAugmentWide, RandAugment, ImageNet, Cifar10, Svhn, AugMix };
inline constexpr EnumName<AugmentPolicy> kAugmentPolicyNames[] = {
    {AugmentPolicy::TrivialAugmentWide, "ta_wide"},
    {AugmentPolicy::RandAugment, "ra"},
    {AugmentPolicy::ImageNet, "imagenet"},
    {AugmentPolicy::Cifar10, "cifar10"},
    {AugmentPolicy::Svhn, "svhn"},
    {AugmentPolicy::AugMix, "augmix"}};
inline const char* to_string(AugmentPolicy p) {
  return name_of(kAugmentPolicyNames, p);
}
inline std::optional<AugmentPolicy> parse_augment_policy(std::string_view name) {
  return value_named(kAugmentPolicyNames, name);
}

// The bins torchvision's classes use unless told otherwise: 31 for TrivialAugmentWide and
// RandAugment (num_magnitude_bins), 10 for AutoAugment and AugMix (fixed: AugMix's
// _PARAMETER_MAX).
int default_magnitude_bins(AugmentPolicy policy);

// One operation a policy may draw: its magnitude per bin (empty for the operations that take
// none: torchvision's 0-dimensional tensor, magnitude 0.0), and whether torchvision negates
// the magnitude with probability 1/2.
struct AugmentSpaceOp {
  AugmentOp op;
  std::vector<double> magnitudes;
  bool is_signed = false;
};

// torchvision's _augmentation_space(num_bins, (height, width)) of the policy's class, in its
// order (RandAugment and TrivialAugmentWide draw an operation by its index), each magnitude
// the float32 that torch.linspace gives, as .item() reads it. The AutoAugment policies share
// AutoAugment's space; TrivialAugmentWide's does not depend on the image's size; AugMix's is
// its all_ops=True space (the enhancements last, after Equalize). num_bins at
// least 2 and the size at least 1 x 1: else stoker::Error.
std::vector<AugmentSpaceOp> augmentation_space(AugmentPolicy policy, int num_bins, int height,
                                               int width);

// One step of an AutoAugment sub-policy: the operation, the probability of applying it, and
// its magnitude bin in the 10-bin space (-1: torchvision's None, magnitude 0.0).
struct AugmentStep {
  AugmentOp op;
  double probability;
  int bin;
};
using SubPolicy = std::array<AugmentStep, 2>;

// The policy's sub-policies in torchvision's order (AutoAugment draws one uniformly); none
// for TrivialAugmentWide, RandAugment and AugMix.
std::span<const SubPolicy> sub_policies(AugmentPolicy policy);

}  // namespace stoker
