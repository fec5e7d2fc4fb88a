// The geometric operations of augment_ops.hpp (augment_geometry.cpp), which
// apply_augment_op (augment_ops.cpp) dispatches to. Each works in place on `image`, with
// `spare` (image.bytes() bytes) holding the original while it writes.
#pragma once

#include <array>

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"
#include "transforms/resample.hpp"

namespace stoker {

// An inverse affine map: output pixel (x, y) samples input (m[0] x + m[1] y + m[2],
// m[3] x + m[4] y + m[5]), in the coordinates of whoever samples it.
using AffineMatrix = std::array<double, 6>;
// torchvision's _get_inverse_affine_matrix(center, angle, translate, scale=1.0, shear) (the
// division by the scale left out: _apply_op's is 1.0), in its double operations.
AffineMatrix inverse_affine(double cx, double cy, double angle, double tx, double ty,
                            double shear_x, double shear_y);

// Pillow's bilinear affine sampling of `in` (w x h RGB bytes) into `out`, which holds the
// fill where no input pixel is sampled: one pixel at a time (Portable) or four in AVX2's
// doubles (Avx2, where the CPU has it; augment_affine_avx2.cpp), the same bytes either way.
void bilinear_affine(const uint8_t* in, int w, int h, uint8_t* out, const AffineMatrix& a,
                     ResampleKernel kernel = best_resample_kernel());
// The AVX2 sampler alone: false where the build has none (the caller checks the CPU).
bool bilinear_affine_avx2(const uint8_t* in, int w, int h, uint8_t* out, const AffineMatrix& a);

// ShearX, ShearY, TranslateX, TranslateY: torchvision's F.affine on a PIL image.
void affine_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
               Interpolation interpolation, const Fill& fill);
// Rotate: torchvision's F.rotate on a PIL image, which is PIL's Image.rotate.
void rotate_op(double angle, RgbPixels image, uint8_t* spare, Interpolation interpolation,
               const Fill& fill);
// HorizontalFlip (left-right) or VerticalFlip (top-bottom).
void flip_op(bool horizontal, RgbPixels image, uint8_t* spare);

}  // namespace stoker
