// torchvision 0.14's tensor affine (augment_tensor_geometry.hpp): functional_tensor.py's
// _gen_affine_grid and _apply_grid_transform, and ATen's CPU grid_sampler_2d, in float32.
#include "transforms/augment_tensor_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "transforms/augment_geometry.hpp"

namespace stoker {

namespace {

constexpr double kPi = 3.14159265358979323846;

// The matrix F.rotate or F.affine hands to functional_tensor, for a grid whose origin is the
// image's centre: rotate's centre is that origin (and its angle negated), the shears' is the
// top-left corner, [0, 0] given in pixels.
AffineMatrix tensor_matrix(AugmentOp op, double magnitude, int w, int h) {
  if (op == AugmentOp::Rotate) return inverse_affine(0, 0, -magnitude, 0, 0, 0, 0);
  const double shear = std::atan(magnitude) * (180.0 / kPi);  // math.degrees(math.atan(m))
  const double cx = -w * 0.5, cy = -h * 0.5;
  return op == AugmentOp::ShearX ? inverse_affine(cx, cy, 0, 0, 0, shear, 0)
                                 : inverse_affine(cx, cy, 0, 0, 0, 0, shear);
}

}  // namespace

void tensor_affine_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation) {
  const int w = image.width, h = image.height;
  const AffineMatrix m = tensor_matrix(op, magnitude, w, h);
  // theta (float32), transposed and divided by half the size: grid units of -1..1.
  const float half_w = 0.5f * static_cast<float>(w), half_h = 0.5f * static_cast<float>(h);
  const float rx[3] = {static_cast<float>(m[0]) / half_w, static_cast<float>(m[1]) / half_w,
                       static_cast<float>(m[2]) / half_w};
  const float ry[3] = {static_cast<float>(m[3]) / half_h, static_cast<float>(m[4]) / half_h,
                       static_cast<float>(m[5]) / half_h};
  std::memcpy(spare, image.data, image.bytes());
  auto value = [&](int x, int y, int c) -> float {  // zeros outside: padding_mode="zeros"
    if (x < 0 || x >= w || y < 0 || y >= h) return 0.0f;
    return spare[(static_cast<size_t>(y) * w + x) * 3 + c];
  };
  for (int oy = 0; oy < h; ++oy) {
    // torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, h): whole steps, exact in float32.
    const float by = static_cast<float>(oy) - 0.5f * static_cast<float>(h) + 0.5f;
    for (int ox = 0; ox < w; ++ox) {
      const float bx = static_cast<float>(ox) - 0.5f * static_cast<float>(w) + 0.5f;
      const float gx = bx * rx[0] + by * rx[1] + rx[2], gy = bx * ry[0] + by * ry[1] + ry[2];
      // grid_sampler_unnormalize with align_corners=False.
      // Clamped to 2 pixels past the image (zeros either way) so that int() stays defined.
      const float ix = std::clamp(((gx + 1.0f) * static_cast<float>(w) - 1.0f) / 2.0f, -2.0f,
                                  static_cast<float>(w) + 1.0f);
      const float iy = std::clamp(((gy + 1.0f) * static_cast<float>(h) - 1.0f) / 2.0f, -2.0f,
                                  static_cast<float>(h) + 1.0f);
      uint8_t* out = image.data + (static_cast<size_t>(oy) * w + ox) * 3;
      if (interpolation == Interpolation::Nearest) {
        const int x = static_cast<int>(std::nearbyint(ix)),
                  y = static_cast<int>(std::nearbyint(iy));
        for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(value(x, y, c));
        continue;
      }
      const float fx = std::floor(ix), fy = std::floor(iy);
      const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
      const float tx = ix - fx, ty = iy - fy;
      const float nw = (1.0f - tx) * (1.0f - ty), ne = tx * (1.0f - ty);
      const float sw = (1.0f - tx) * ty, se = tx * ty;
      for (int c = 0; c < 3; ++c) {
        const float v = value(x0, y0, c) * nw + value(x0 + 1, y0, c) * ne +
                        value(x0, y0 + 1, c) * sw + value(x0 + 1, y0 + 1, c) * se;
        out[c] = static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
      }
    }
  }
}

}  // namespace stoker
