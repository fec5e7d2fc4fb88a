// What an image pipeline does (image_transforms.hpp): its output size and layout, the crop
// and flip it draws in training, the automatic augmentation and random erasing of
// torchvision's reference training preset, the resize of evaluation, its normalisation and
// dtype; and torchvision's interpolation modes, which the augmentations (augment_ops.hpp)
// sample with.
//
// Header only.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "stoker/common/enum_names.hpp"
#include "stoker/transforms/augment_policy.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

enum class Layout { CHW, HWC };
inline constexpr EnumName<Layout> kLayoutNames[] = {{Layout::CHW, "CHW"}, {Layout::HWC, "HWC"}};
inline const char* to_string(Layout l) {
  return name_of(kLayoutNames, l);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<Layout> parse_layout(std::string_view s) {
  return value_named(kLayoutNames, s);
}

// torchvision's InterpolationMode: what the resize of both passes and the augmentation's
// geometric operations sample with (the reference preset passes one to all of them).
enum class Interpolation { Bilinear, Bicubic, Nearest };
inline constexpr EnumName<Interpolation> kInterpolationNames[] = {
    {Interpolation::Bilinear, "bilinear"},
    {Interpolation::Bicubic, "bicubic"},
    {Interpolation::Nearest, "nearest"}};
inline const char* to_string(Interpolation i) {
  return name_of(kInterpolationNames, i);
}

struct ImageTransformOptions {
  bool train = true;
  int size = 224;                            // output height and width
  int resize_shorter = 256;                  // eval only: the shorter side before the centre crop
  double scale_min = 0.08, scale_max = 1.0;  // RandomResizedCrop scale (area fraction)
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // RandomResizedCrop aspect ratio
  double flip_p = 0.5;  // train only: probability of a horizontal flip
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // on the 0..1 scale (ToTensor)
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  DType dtype = DType::F32;  // F32 and F16 are normalized; U8 is the resized pixel, 0..255
  Layout layout = Layout::CHW;
  bool antialias = true;
  // The resize's filter (PIL's, as torchvision resizes PIL images) and the one the
  // augmentation's geometric operations sample with, as the reference preset's
  // --interpolation: bilinear and bicubic antialiased when downscaling, nearest never.
  Interpolation interpolation = Interpolation::Bilinear;
  bool dct_scaling = true;  // let libjpeg downscale by 2, 4 or 8 when the crop is that large
  // Training only, after the flip, on the resized uint8 image, as the reference preset's
  // --auto-augment (its geometric operations sample with `interpolation`).
  std::optional<AugmentPolicy> auto_augment_policy;
  int ra_magnitude = 9;  // RandAugment's bin of 31 (the preset's --ra-magnitude)
  // Training only: RandomErasing after Normalize, with torchvision's scale (0.02, 0.33),
  // ratio (0.3, 3.3) and value 0 (the preset's --random-erase).
  double random_erase_prob = 0.0;
  // MixUp and CutMix on each batch (batch_mix.hpp), as the reference script's --mixup-alpha
  // and --cutmix-alpha (0: off); with either on, the labels are float32 one-hot rows of
  // num_classes (0: the dataset's class count).
  double mixup_alpha = 0.0, cutmix_alpha = 0.0;
  uint64_t num_classes = 0;
};

}  // namespace stoker
