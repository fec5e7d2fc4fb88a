// The colour, histogram and enhancement augmentations as torchvision runs them on a PIL
// image (torchvision's F.* call ImageOps and ImageEnhance), in Pillow 9.4's arithmetic:
// - ImageEnhance blends a degenerate image into the image (Image.blend, libImaging/Blend.c):
//   in float, the factor rounded to float, truncated to a byte (clipped when extrapolating).
//   Brightness's degenerate is black, Color's the ITU-R 601-2 luma in 16-bit fixed point
//   (Convert.c), Contrast's the luma's mean rounded (ImageStat), Sharpness's the SMOOTH
//   filter (Filter.c: float kernel 1/13, 5/13, +0.5, truncated; the border rows and columns
//   kept, and the whole image kept below 3x3).
// - ImageOps' tables: posterize, solarize, invert, autocontrast (no cutoff), equalize.
// The geometric operations are augment_geometry.cpp's. Built with -ffp-contract=off, as
// Pillow's float operations are not fused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "stoker/common/error.hpp"
#include "transforms/augment_geometry.hpp"

namespace stoker {

namespace {

using Lut = std::array<uint8_t, 256>;

void apply_lut(RgbPixels image, const Lut& lut) {
  for (size_t i = 0; i < image.bytes(); ++i) image.data[i] = lut[image.data[i]];
}

// One table per channel (ImageOps' layer by layer tables).
void apply_luts(RgbPixels image, const Lut (&luts)[3]) {
  for (size_t i = 0; i < image.bytes(); i += 3) {
    for (int c = 0; c < 3; ++c) image.data[i + c] = luts[c][image.data[i + c]];
  }
}

// Image.blend(degenerate, image, alpha), in place over the image; degenerate(i) is byte i of
// the degenerate image.
template <class Degenerate>
void blend(RgbPixels image, float alpha, Degenerate degenerate) {
  uint8_t* px = image.data;
  const size_t n = image.bytes();
  if (alpha == 0.0f) {
    for (size_t i = 0; i < n; ++i) px[i] = degenerate(i);
  } else if (alpha == 1.0f) {
    return;
  } else if (alpha >= 0 && alpha <= 1.0) {
    for (size_t i = 0; i < n; ++i) {
      const int a = degenerate(i), b = px[i];
      px[i] = static_cast<uint8_t>(static_cast<float>(a) + alpha * static_cast<float>(b - a));
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      const int a = degenerate(i), b = px[i];
      const float t = static_cast<float>(a) + alpha * static_cast<float>(b - a);
      px[i] = t <= 0.0f ? 0 : t >= 255.0f ? 255 : static_cast<uint8_t>(t);
    }
  }
}

// Pillow's RGB -> L.
uint8_t luma(const uint8_t* p) {
  return static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
}

// ImageFilter.SMOOTH into `out` (ImagingFilter3x3 with offset 0).
void smooth(RgbPixels image, uint8_t* out) {
  const int w = image.width, h = image.height;
  std::memcpy(out, image.data, image.bytes());
  if (w < 3 || h < 3) return;  // ImagingFilter copies images smaller than the kernel
  const float k1 = 1.0f / 13.0f, k5 = 5.0f / 13.0f, offset = 0.0f + 0.5f;
  const size_t stride = static_cast<size_t>(w) * 3;
  auto row3 = [](const uint8_t* p, float a, float b, float c) {
    return static_cast<float>(p[-3]) * a + static_cast<float>(p[0]) * b +
           static_cast<float>(p[3]) * c;
  };
  for (int y = 1; y < h - 1; ++y) {
    const uint8_t* mid = image.data + y * stride;
    uint8_t* o = out + y * stride;
    for (size_t i = 3; i < stride - 3; ++i) {
      float ss = offset;
      ss += row3(mid + stride + i, k1, k1, k1);  // Pillow sums the row below first
      ss += row3(mid + i, k1, k5, k1);
      ss += row3(mid - stride + i, k1, k1, k1);
      o[i] = ss <= 0.0f ? 0 : ss >= 255.0f ? 255 : static_cast<uint8_t>(ss);
    }
  }
}

// ImageOps.autocontrast(image) for one channel's histogram.
Lut autocontrast_lut(const uint64_t* hist) {
  Lut lut;
  int lo = 0, hi = 255;
  while (lo < 255 && hist[lo] == 0) ++lo;
  while (hi > 0 && hist[hi] == 0) --hi;
  if (hi <= lo) {
    for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i);
    return lut;
  }
  const double scale = 255.0 / (hi - lo), offset = -lo * scale;
  for (int i = 0; i < 256; ++i) {
    const double v = std::trunc(i * scale + offset);  // Python's int()
    lut[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  return lut;
}

// ImageOps.equalize(image) for one channel's histogram.
Lut equalize_lut(const uint64_t* hist) {
  Lut lut;
  for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i);
  uint64_t total = 0, last = 0, nonzero = 0;
  for (int i = 0; i < 256; ++i) {
    if (hist[i] == 0) continue;
    total += hist[i];
    last = hist[i];
    ++nonzero;
  }
  if (nonzero <= 1) return lut;
  const uint64_t step = (total - last) / 255;
  if (step == 0) return lut;
  uint64_t n = step / 2;
  for (int i = 0; i < 256; ++i) {
    // Image.point clips the table's entries to a byte: the last ones can pass 255.
    lut[i] = static_cast<uint8_t>(std::min<uint64_t>(n / step, 255));
    n += hist[i];
  }
  return lut;
}

template <class LutOf>
void per_channel(RgbPixels image, LutOf lut_of) {
  uint64_t hist[3][256] = {};
  for (size_t i = 0; i < image.bytes(); i += 3) {
    for (int c = 0; c < 3; ++c) ++hist[c][image.data[i + c]];
  }
  const Lut luts[3] = {lut_of(hist[0]), lut_of(hist[1]), lut_of(hist[2])};
  apply_luts(image, luts);
}

void check_finite(double magnitude, AugmentOp op) {
  if (!std::isfinite(magnitude)) {
    throw Error(std::string("magnitude of ") + to_string(op), "must be a finite number",
                "give the operation's magnitude, e.g. a bin of its policy");
  }
}

}  // namespace

void apply_augment_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation, Fill fill) {
  check_finite(magnitude, op);
  if (image.bytes() == 0) return;
  const float factor = static_cast<float>(1.0 + magnitude);  // the enhancements' factor
  switch (op) {
    case AugmentOp::Identity:
      return;
    case AugmentOp::ShearX:
    case AugmentOp::ShearY:
    case AugmentOp::TranslateX:
    case AugmentOp::TranslateY:
      return affine_op(op, magnitude, image, spare, interpolation, fill);
    case AugmentOp::Rotate:
      return rotate_op(magnitude, image, spare, interpolation, fill);
    case AugmentOp::Brightness:
      return blend(image, factor, [](size_t) { return 0; });
    case AugmentOp::Color: {
      const size_t pixels = image.bytes() / 3;
      for (size_t p = 0; p < pixels; ++p) spare[p] = luma(image.data + 3 * p);
      return blend(image, factor, [&](size_t i) { return spare[i / 3]; });
    }
    case AugmentOp::Contrast: {
      uint64_t hist[256] = {};
      for (size_t i = 0; i < image.bytes(); i += 3) ++hist[luma(image.data + i)];
      double sum = 0.0;  // ImageStat's float sum, then its mean
      for (int j = 0; j < 256; ++j) sum += static_cast<double>(j * hist[j]);
      const int mean = static_cast<int>(sum / static_cast<double>(image.bytes() / 3) + 0.5);
      return blend(image, factor, [mean](size_t) { return mean; });
    }
    case AugmentOp::Sharpness:
      smooth(image, spare);
      return blend(image, factor, [&](size_t i) { return spare[i]; });
    case AugmentOp::Posterize: {
      const double bits = std::trunc(magnitude);
      if (!(bits >= 0 && bits <= 8)) {
        throw Error("magnitude of Posterize",
                    "int(magnitude) must be 0 to 8 bits, got " + std::to_string(magnitude),
                    "give 0..8");
      }
      const int keep = ~((1 << (8 - static_cast<int>(bits))) - 1);
      Lut lut;
      for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i & keep);
      return apply_lut(image, lut);
    }
    case AugmentOp::Solarize: {
      Lut lut;
      for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i < magnitude ? i : 255 - i);
      return apply_lut(image, lut);
    }
    case AugmentOp::AutoContrast:
      return per_channel(image, autocontrast_lut);
    case AugmentOp::Equalize:
      return per_channel(image, equalize_lut);
    case AugmentOp::Invert:
      for (size_t i = 0; i < image.bytes(); ++i)
        image.data[i] = static_cast<uint8_t>(255 - image.data[i]);
      return;
    case AugmentOp::HorizontalFlip:
    case AugmentOp::VerticalFlip:
      return flip_op(op == AugmentOp::HorizontalFlip, image, spare);
  }
}

}  // namespace stoker
