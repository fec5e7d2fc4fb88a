// torchvision's augmentation operations on an RGB image of bytes, as
// torchvision.transforms.autoaugment._apply_op(img, op, magnitude, interpolation, fill) runs
// them on a PIL image: the same names and magnitudes, and Pillow 9.4's arithmetic step by
// step (its float blends that truncate, its 3x3 smoothing filter, ImageOps' tables, its
// inverse affine matrices with nearest sampling in 16.16 fixed point, its bilinear and
// bicubic samplers), so that the bytes are the ones torchvision gives. The operations'
// names, the image and the fill are augment_data.hpp's.
//
// Implemented in src/transforms/: augment_ops.cpp (the colour, histogram and enhancement
// operations), augment_geometry.cpp (shears, translations, rotation, flips).
#pragma once

#include <cstdint>

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker {

// `op` with `magnitude` on `image`, in place, as _apply_op does on the PIL image of the same
// pixels. `spare` holds image.bytes() bytes: the operations that read the original while
// they write use it. Posterize takes int(magnitude) bits, which must be 0..8, and every
// magnitude must be finite: else stoker::Error naming the magnitude.
void apply_augment_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation = Interpolation::Nearest, Fill fill = {0, 0, 0});

}  // namespace stoker
