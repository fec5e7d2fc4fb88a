// The geometric operations of augment_ops.hpp (augment_geometry.cpp), which
// apply_augment_op (augment_ops.cpp) dispatches to. Each works in place on `image`, with
// `spare` (image.bytes() bytes) holding the original while it writes.
#pragma once

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker {

// ShearX, ShearY, TranslateX, TranslateY: torchvision's F.affine on a PIL image.
void affine_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
               Interpolation interpolation, const Fill& fill);
// Rotate: torchvision's F.rotate on a PIL image, which is PIL's Image.rotate.
void rotate_op(double angle, RgbPixels image, uint8_t* spare, Interpolation interpolation,
               const Fill& fill);
// HorizontalFlip (left-right) or VerticalFlip (top-bottom).
void flip_op(bool horizontal, RgbPixels image, uint8_t* spare);

}  // namespace stoker
