// The policies' tables (augment_policy.hpp): torchvision 0.14's _augmentation_space and
// AutoAugment's _get_policies, and torch.linspace's float32 values as torch computes them.
// Built with -ffp-contract=off: the fused and unfused steps below are torch's, one by one.
#include "stoker/transforms/augment_policy.hpp"

#include <cmath>
#include <string>

#include "stoker/common/error.hpp"

namespace stoker {

namespace {

// torch.linspace(start, end, steps) in float32 as torch 1.13's CPU kernel gives it on x86-64
// (its AVX2 build, the one it picks on any CPU with AVX2): start + step * i below halfway and
// end - step * (steps - 1 - i) from there, each one fused multiply-add (the kernel's file is
// built with FMA); 16 values at a time while 16 remain, as two vectors of 8 whose first
// value is that and the others first + k * step, unfused.
std::vector<double> torch_linspace(float start, float end, int steps) {
  const float step = steps > 1 ? (end - start) / static_cast<float>(steps - 1) : 0.0f;
  const int halfway = steps / 2;
  auto one = [&](int i) {
    return i < halfway ? std::fma(step, static_cast<float>(i), start)
                       : std::fma(-step, static_cast<float>(steps - 1 - i), end);
  };
  constexpr int kVector = 8;
  std::vector<double> out;
  int i = 0;
  for (; i <= steps - 2 * kVector; i += 2 * kVector) {
    for (int v = i; v < i + 2 * kVector; v += kVector) {
      const float first = one(v);
      out.push_back(first);
      for (int k = 1; k < kVector; ++k) out.push_back(first + static_cast<float>(k) * step);
    }
  }
  for (; i < steps; ++i) out.push_back(one(i));
  return out;
}

// `top` - round(i / ((bins - 1) / steps)), rounding half to even, in float32 as torch does.
std::vector<double> posterize_bits(int top, int steps, int bins) {
  const float divisor = static_cast<float>((bins - 1) / static_cast<double>(steps));
  std::vector<double> out;
  for (int i = 0; i < bins; ++i) {
    out.push_back(top - static_cast<int>(std::nearbyint(static_cast<float>(i) / divisor)));
  }
  return out;
}

// The ranges in which the classes' spaces differ: the bins' largest magnitudes, and the
// Posterize bits' steps (8 - round(bin / ((bins - 1) / steps))).
struct SpaceRanges {
  float shear, translate_x, translate_y, rotate, enhance;
  int posterize_steps;
};

// The space in torchvision's order: Identity first but for AutoAugment, Invert last only
// for it.
std::vector<AugmentSpaceOp> space_of(const SpaceRanges& r, int bins, bool auto_augment) {
  const std::vector<double> shear = torch_linspace(0.0f, r.shear, bins);
  const std::vector<double> enhance = torch_linspace(0.0f, r.enhance, bins);
  std::vector<AugmentSpaceOp> s;
  if (!auto_augment) s.push_back({AugmentOp::Identity, {}, false});
  s.push_back({AugmentOp::ShearX, shear, true});
  s.push_back({AugmentOp::ShearY, shear, true});
  s.push_back({AugmentOp::TranslateX, torch_linspace(0.0f, r.translate_x, bins), true});
  s.push_back({AugmentOp::TranslateY, torch_linspace(0.0f, r.translate_y, bins), true});
  s.push_back({AugmentOp::Rotate, torch_linspace(0.0f, r.rotate, bins), true});
  for (AugmentOp op :
       {AugmentOp::Brightness, AugmentOp::Color, AugmentOp::Contrast, AugmentOp::Sharpness}) {
    s.push_back({op, enhance, true});
  }
  s.push_back({AugmentOp::Posterize, posterize_bits(8, r.posterize_steps, bins), false});
  s.push_back({AugmentOp::Solarize, torch_linspace(255.0f, 0.0f, bins), false});
  s.push_back({AugmentOp::AutoContrast, {}, false});
  s.push_back({AugmentOp::Equalize, {}, false});
  if (auto_augment) s.push_back({AugmentOp::Invert, {}, false});
  return s;
}

// AugMix's all_ops=True space in its dict's order: the geometric operations (translations
// up to a third of the side), Posterize's 4 - round(bin / ((bins - 1) / 4)) bits, Solarize,
// AutoContrast, Equalize, then the four enhancements (0 to 0.9), which all_ops adds last.
std::vector<AugmentSpaceOp> augmix_space(int bins, int height, int width) {
  const std::vector<double> shear = torch_linspace(0.0f, 0.3f, bins);
  const std::vector<double> enhance = torch_linspace(0.0f, 0.9f, bins);
  std::vector<AugmentSpaceOp> s = {
      {AugmentOp::ShearX, shear, true},
      {AugmentOp::ShearY, shear, true},
      {AugmentOp::TranslateX, torch_linspace(0.0f, static_cast<float>(width / 3.0), bins), true},
      {AugmentOp::TranslateY, torch_linspace(0.0f, static_cast<float>(height / 3.0), bins), true},
      {AugmentOp::Rotate, torch_linspace(0.0f, 30.0f, bins), true},
      {AugmentOp::Posterize, posterize_bits(4, 4, bins), false},
      {AugmentOp::Solarize, torch_linspace(255.0f, 0.0f, bins), false},
      {AugmentOp::AutoContrast, {}, false},
      {AugmentOp::Equalize, {}, false}};
  for (AugmentOp op :
       {AugmentOp::Brightness, AugmentOp::Color, AugmentOp::Contrast, AugmentOp::Sharpness}) {
    s.push_back({op, enhance, true});
  }
  return s;
}

// AutoAugment's learned policies, as torchvision lists them.
constexpr AugmentOp kPosterize = AugmentOp::Posterize, kRotate = AugmentOp::Rotate,
                    kSolarize = AugmentOp::Solarize, kAutoContrast = AugmentOp::AutoContrast,
                    kEqualize = AugmentOp::Equalize, kColor = AugmentOp::Color,
                    kInvert = AugmentOp::Invert, kContrast = AugmentOp::Contrast,
                    kSharpness = AugmentOp::Sharpness, kShearX = AugmentOp::ShearX,
                    kShearY = AugmentOp::ShearY, kTranslateX = AugmentOp::TranslateX,
                    kTranslateY = AugmentOp::TranslateY, kBrightness = AugmentOp::Brightness;
constexpr SubPolicy kImageNet[] = {
    {{{kPosterize, 0.4, 8}, {kRotate, 0.6, 9}}},
    {{{kSolarize, 0.6, 5}, {kAutoContrast, 0.6, -1}}},
    {{{kEqualize, 0.8, -1}, {kEqualize, 0.6, -1}}},
    {{{kPosterize, 0.6, 7}, {kPosterize, 0.6, 6}}},
    {{{kEqualize, 0.4, -1}, {kSolarize, 0.2, 4}}},
    {{{kEqualize, 0.4, -1}, {kRotate, 0.8, 8}}},
    {{{kSolarize, 0.6, 3}, {kEqualize, 0.6, -1}}},
    {{{kPosterize, 0.8, 5}, {kEqualize, 1.0, -1}}},
    {{{kRotate, 0.2, 3}, {kSolarize, 0.6, 8}}},
    {{{kEqualize, 0.6, -1}, {kPosterize, 0.4, 6}}},
    {{{kRotate, 0.8, 8}, {kColor, 0.4, 0}}},
    {{{kRotate, 0.4, 9}, {kEqualize, 0.6, -1}}},
    {{{kEqualize, 0.0, -1}, {kEqualize, 0.8, -1}}},
    {{{kInvert, 0.6, -1}, {kEqualize, 1.0, -1}}},
    {{{kColor, 0.6, 4}, {kContrast, 1.0, 8}}},
    {{{kRotate, 0.8, 8}, {kColor, 1.0, 2}}},
    {{{kColor, 0.8, 8}, {kSolarize, 0.8, 7}}},
    {{{kSharpness, 0.4, 7}, {kInvert, 0.6, -1}}},
    {{{kShearX, 0.6, 5}, {kEqualize, 1.0, -1}}},
    {{{kColor, 0.4, 0}, {kEqualize, 0.6, -1}}},
    {{{kEqualize, 0.4, -1}, {kSolarize, 0.2, 4}}},
    {{{kSolarize, 0.6, 5}, {kAutoContrast, 0.6, -1}}},
    {{{kInvert, 0.6, -1}, {kEqualize, 1.0, -1}}},
    {{{kColor, 0.6, 4}, {kContrast, 1.0, 8}}},
    {{{kEqualize, 0.8, -1}, {kEqualize, 0.6, -1}}},
};
constexpr SubPolicy kCifar10[] = {
    {{{kInvert, 0.1, -1}, {kContrast, 0.2, 6}}},
    {{{kRotate, 0.7, 2}, {kTranslateX, 0.3, 9}}},
    {{{kSharpness, 0.8, 1}, {kSharpness, 0.9, 3}}},
    {{{kShearY, 0.5, 8}, {kTranslateY, 0.7, 9}}},
    {{{kAutoContrast, 0.5, -1}, {kEqualize, 0.9, -1}}},
    {{{kShearY, 0.2, 7}, {kPosterize, 0.3, 7}}},
    {{{kColor, 0.4, 3}, {kBrightness, 0.6, 7}}},
    {{{kSharpness, 0.3, 9}, {kBrightness, 0.7, 9}}},
    {{{kEqualize, 0.6, -1}, {kEqualize, 0.5, -1}}},
    {{{kContrast, 0.6, 7}, {kSharpness, 0.6, 5}}},
    {{{kColor, 0.7, 7}, {kTranslateX, 0.5, 8}}},
    {{{kEqualize, 0.3, -1}, {kAutoContrast, 0.4, -1}}},
    {{{kTranslateY, 0.4, 3}, {kSharpness, 0.2, 6}}},
    {{{kBrightness, 0.9, 6}, {kColor, 0.2, 8}}},
    {{{kSolarize, 0.5, 2}, {kInvert, 0.0, -1}}},
    {{{kEqualize, 0.2, -1}, {kAutoContrast, 0.6, -1}}},
    {{{kEqualize, 0.2, -1}, {kEqualize, 0.6, -1}}},
    {{{kColor, 0.9, 9}, {kEqualize, 0.6, -1}}},
    {{{kAutoContrast, 0.8, -1}, {kSolarize, 0.2, 8}}},
    {{{kBrightness, 0.1, 3}, {kColor, 0.7, 0}}},
    {{{kSolarize, 0.4, 5}, {kAutoContrast, 0.9, -1}}},
    {{{kTranslateY, 0.9, 9}, {kTranslateY, 0.7, 9}}},
    {{{kAutoContrast, 0.9, -1}, {kSolarize, 0.8, 3}}},
    {{{kEqualize, 0.8, -1}, {kInvert, 0.1, -1}}},
    {{{kTranslateY, 0.7, 9}, {kAutoContrast, 0.9, -1}}},
};
constexpr SubPolicy kSvhn[] = {
    {{{kShearX, 0.9, 4}, {kInvert, 0.2, -1}}},
    {{{kShearY, 0.9, 8}, {kInvert, 0.7, -1}}},
    {{{kEqualize, 0.6, -1}, {kSolarize, 0.6, 6}}},
    {{{kInvert, 0.9, -1}, {kEqualize, 0.6, -1}}},
    {{{kEqualize, 0.6, -1}, {kRotate, 0.9, 3}}},
    {{{kShearX, 0.9, 4}, {kAutoContrast, 0.8, -1}}},
    {{{kShearY, 0.9, 8}, {kInvert, 0.4, -1}}},
    {{{kShearY, 0.9, 5}, {kSolarize, 0.2, 6}}},
    {{{kInvert, 0.9, -1}, {kAutoContrast, 0.8, -1}}},
    {{{kEqualize, 0.6, -1}, {kRotate, 0.9, 3}}},
    {{{kShearX, 0.9, 4}, {kSolarize, 0.3, 3}}},
    {{{kShearY, 0.8, 8}, {kInvert, 0.7, -1}}},
    {{{kEqualize, 0.9, -1}, {kTranslateY, 0.6, 6}}},
    {{{kInvert, 0.9, -1}, {kEqualize, 0.6, -1}}},
    {{{kContrast, 0.3, 3}, {kRotate, 0.8, 4}}},
    {{{kInvert, 0.8, -1}, {kTranslateY, 0.0, 2}}},
    {{{kShearY, 0.7, 6}, {kSolarize, 0.4, 8}}},
    {{{kInvert, 0.6, -1}, {kRotate, 0.8, 4}}},
    {{{kShearY, 0.3, 7}, {kTranslateX, 0.9, 3}}},
    {{{kShearX, 0.1, 6}, {kInvert, 0.6, -1}}},
    {{{kSolarize, 0.7, 2}, {kTranslateY, 0.6, 7}}},
    {{{kShearY, 0.8, 4}, {kInvert, 0.8, -1}}},
    {{{kShearX, 0.7, 9}, {kTranslateY, 0.8, 3}}},
    {{{kShearY, 0.8, 5}, {kAutoContrast, 0.7, -1}}},
    {{{kShearX, 0.7, 2}, {kInvert, 0.1, -1}}},
};

}  // namespace

int default_magnitude_bins(AugmentPolicy policy) {
  return policy == AugmentPolicy::TrivialAugmentWide || policy == AugmentPolicy::RandAugment ? 31
                                                                                             : 10;
}

std::vector<AugmentSpaceOp> augmentation_space(AugmentPolicy policy, int num_bins, int height,
                                               int width) {
  if (num_bins < 2) {
    throw Error("num_magnitude_bins=" + std::to_string(num_bins), "must be at least 2",
                "give 2 or more bins (torchvision's default is " +
                    std::to_string(default_magnitude_bins(policy)) + ")");
  }
  if (height < 1 || width < 1) {
    throw Error("image of " + std::to_string(width) + " x " + std::to_string(height),
                "has no pixels to augment", "give an image of 1 x 1 or more");
  }
  if (policy == AugmentPolicy::AugMix) return augmix_space(num_bins, height, width);
  if (policy == AugmentPolicy::TrivialAugmentWide) {
    return space_of({0.99f, 32.0f, 32.0f, 135.0f, 0.99f, 6}, num_bins, false);
  }
  // RandAugment's and AutoAugment's translations reach 150/331 of the image's side.
  const SpaceRanges ranges = {0.3f,
                              static_cast<float>(150.0 / 331.0 * width),
                              static_cast<float>(150.0 / 331.0 * height),
                              30.0f,
                              0.9f,
                              4};
  return space_of(ranges, num_bins, policy != AugmentPolicy::RandAugment);
}

std::span<const SubPolicy> sub_policies(AugmentPolicy policy) {
  switch (policy) {
    case AugmentPolicy::ImageNet:
      return kImageNet;
    case AugmentPolicy::Cifar10:
      return kCifar10;
    case AugmentPolicy::Svhn:
      return kSvhn;
    case AugmentPolicy::TrivialAugmentWide:
    case AugmentPolicy::RandAugment:
    case AugmentPolicy::AugMix:
      break;
  }
  return {};
}

}  // namespace stoker
