// What the augmentations (augment_ops.hpp) work on: the operations' names as torchvision
// spells them, an RGB image of bytes, and the fill of the geometric operations. Apart from
// augment_ops.hpp because its geometric half (src/transforms/augment_geometry.hpp) needs
// them while augment_ops.cpp includes it.
//
// Header only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stoker/common/enum_names.hpp"

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

}  // namespace stoker
