// torchvision's augmentation operations on an RGB image of bytes, as
// torchvision.transforms.autoaugment._apply_op(img, op, magnitude, interpolation, fill) runs
// them on a PIL image: the same names and magnitudes, and Pillow 9.4's arithmetic step by
// step (its float blends that truncate, its 3x3 smoothing filter, ImageOps' tables, its
// inverse affine matrices with nearest sampling in 16.16 fixed point, its bilinear and
// bicubic samplers), so that the bytes are the ones torchvision gives. The automatic
// augmentation policies (augment_policy.hpp) draw these operations in the image pipeline.
//
// Implemented in src/transforms/: augment_ops.cpp (the names, colour, histogram and
// enhancement operations), augment_geometry.cpp (shears, translations, rotation, flips).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stoker/common/enum_names.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker {

// _apply_op's operations, and the two flips (torchvision's hflip and vflip).
enum class AugmentOp {
  Identity,
  ShearX,
  ShearY,
  TranslateX,
  TranslateY,
  Rotate,
  Brightness,
  Color,
  Contrast,
  Sharpness,
  Posterize,
  Solarize,
  AutoContrast,
  Equalize,
  Invert,
  HorizontalFlip,
  VerticalFlip,
};
inline constexpr EnumName<AugmentOp> kAugmentOpNames[] = {
    {AugmentOp::Identity, "Identity"},
    {AugmentOp::ShearX, "ShearX"},
    {AugmentOp::ShearY, "ShearY"},
    {AugmentOp::TranslateX, "TranslateX"},
    {AugmentOp::TranslateY, "TranslateY"},
    {AugmentOp::Rotate, "Rotate"},
    {AugmentOp::Brightness, "Brightness"},
    {AugmentOp::Color, "Color"},
    {AugmentOp::Contrast, "Contrast"},
    {AugmentOp::Sharpness, "Sharpness"},
    {AugmentOp::Posterize, "Posterize"},
    {AugmentOp::Solarize, "Solarize"},
    {AugmentOp::AutoContrast, "AutoContrast"},
    {AugmentOp::Equalize, "Equalize"},
    {AugmentOp::Invert, "Invert"},
    {AugmentOp::HorizontalFlip, "HorizontalFlip"},
    {AugmentOp::VerticalFlip, "VerticalFlip"},
};
inline const char* to_string(AugmentOp op) {
  return name_of(kAugmentOpNames, op);
}
inline std::optional<AugmentOp> parse_augment_op(std::string_view name) {
  return value_named(kAugmentOpNames, name);
}

// An RGB image: `height` rows of `width` * 3 bytes, no padding between rows.
struct RgbPixels {
  uint8_t* data = nullptr;
  int width = 0, height = 0;
  size_t bytes() const { return static_cast<size_t>(width) * height * 3; }
};

// What _apply_op's geometric operations fill the uncovered area with (its `fill`, one byte
// per channel; torchvision's None is 0).
using Fill = std::array<uint8_t, 3>;

// `op` with `magnitude` on `image`, in place, as _apply_op does on the PIL image of the same
// pixels. `spare` holds image.bytes() bytes: the operations that read the original while
// they write use it. Posterize takes int(magnitude) bits, which must be 0..8, and every
// magnitude must be finite: else stoker::Error naming the magnitude.
void apply_augment_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation = Interpolation::Nearest, Fill fill = {0, 0, 0});

}  // namespace stoker
