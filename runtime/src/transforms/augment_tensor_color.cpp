// The colour operations on a uint8 tensor (augment_tensor_color.hpp), in torch's float32
// order: every product and sum rounded on its own (built with -ffp-contract=off), the
// scalars rounded to float32 as torch's kernels take them, .to(uint8) truncating.
#include "transforms/augment_tensor_color.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stoker {

namespace {

// .clamp(0, 255).to(uint8).
uint8_t to_byte(float v) {
  return static_cast<uint8_t>(std::min(std::max(v, 0.0f), 255.0f));
}

// F_t.rgb_to_grayscale: (0.2989 r + 0.587 g + 0.114 b).to(uint8), one float32 step at a time.
uint8_t grey(const uint8_t* p) {
  const float l = 0.2989f * static_cast<float>(p[0]) + 0.587f * static_cast<float>(p[1]);
  return static_cast<uint8_t>(l + 0.114f * static_cast<float>(p[2]));
}

// F_t._blend(image, other, ratio): ratio * image + (1 - ratio) * other, the ratio and its
// complement (taken in double, as Python does) rounded to float32; `other(p, c)` is the
// second image's value at byte p of channel c.
template <class Other>
void blend(RgbPixels image, double ratio, Other other) {
  const float r = static_cast<float>(ratio), rest = static_cast<float>(1.0 - ratio);
  uint8_t* px = image.data;
  const size_t n = image.bytes();
  for (size_t p = 0; p < n; ++p) {
    px[p] = to_byte(r * static_cast<float>(px[p]) + rest * other(p));
  }
}

// F_t._blurred_degenerate_image: the 3 x 3 kernel (1 around, 5 in the centre, / 13) inside
// the border, rounded (never a tie: the sums are k / 13), the border kept. Into `out`.
void blurred(RgbPixels image, uint8_t* out) {
  std::memcpy(out, image.data, image.bytes());
  const int w = image.width, h = image.height;
  for (int y = 1; y + 1 < h; ++y) {
    for (int x = 1; x + 1 < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        int sum = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            sum += image.data[((static_cast<size_t>(y + dy) * w) + x + dx) * 3 + c];
          }
        }
        const size_t at = (static_cast<size_t>(y) * w + x) * 3 + c;
        sum += 4 * image.data[at];
        out[at] = static_cast<uint8_t>(std::nearbyint(sum / 13.0));
      }
    }
  }
}

// F_t.autocontrast: each channel stretched to 0..255, (x - min) * (255 / (max - min)) in
// float32; a flat channel kept.
void autocontrast(RgbPixels image) {
  const size_t n = image.bytes();
  for (int c = 0; c < 3; ++c) {
    uint8_t lo = 255, hi = 0;
    for (size_t p = c; p < n; p += 3) {
      lo = std::min(lo, image.data[p]);
      hi = std::max(hi, image.data[p]);
    }
    const float minimum = lo == hi ? 0.0f : lo;
    const float scale = lo == hi ? 1.0f : 255.0f / (static_cast<float>(hi) - lo);
    for (size_t p = c; p < n; p += 3) {
      image.data[p] = to_byte((static_cast<float>(image.data[p]) - minimum) * scale);
    }
  }
}

}  // namespace

bool is_tensor_color_op(AugmentOp op) {
  return op == AugmentOp::Brightness || op == AugmentOp::Color || op == AugmentOp::Contrast ||
         op == AugmentOp::Sharpness || op == AugmentOp::AutoContrast;
}

void tensor_color_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare) {
  const double factor = 1.0 + magnitude;
  const size_t n = image.bytes();
  switch (op) {
    case AugmentOp::Brightness:
      blend(image, factor, [](size_t) { return 0.0f; });
      return;
    case AugmentOp::Color:
      for (size_t p = 0; p < n; p += 3) spare[p] = grey(image.data + p);
      blend(image, factor, [&](size_t p) { return static_cast<float>(spare[p - p % 3]); });
      return;
    case AugmentOp::Contrast: {
      // torch.mean of the grey image as float32: the sum of whole numbers is exact in double.
      double sum = 0;
      for (size_t p = 0; p < n; p += 3) sum += grey(image.data + p);
      const float mean = static_cast<float>(sum) / static_cast<float>(n / 3);
      blend(image, factor, [&](size_t) { return mean; });
      return;
    }
    case AugmentOp::Sharpness:
      if (image.width <= 2 || image.height <= 2) return;
      blurred(image, spare);
      blend(image, factor, [&](size_t p) { return static_cast<float>(spare[p]); });
      return;
    case AugmentOp::AutoContrast:
      autocontrast(image);
      return;
    default:
      return;
  }
}

}  // namespace stoker
