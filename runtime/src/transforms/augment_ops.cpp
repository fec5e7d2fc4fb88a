// The colour, histogram and enhancement augmentations as torchvision runs them on a PIL
// image (torchvision's F.* call ImageOps and ImageEnhance), in Pillow 9.4's arithmetic:
// - ImageEnhance blends a degenerate image into the image (Image.blend, libImaging/Blend.c):
//   in float, the factor rounded to float, truncated to a byte (clipped when extrapolating).
//   Brightness's degenerate is black, Color's the ITU-R 601-2 luma in 16-bit fixed point
//   (Convert.c), Contrast's the luma's mean rounded (ImageStat), Sharpness's the SMOOTH
//   filter (Filter.c: float kernel 1/13, 5/13, +0.5, truncated; the border rows and columns
//   kept, and the whole image kept below 3x3).
// - ImageOps' tables: posterize, solarize, invert, autocontrast (no cutoff), equalize.
// Those that map each byte by a table of its channel, Brightness and Contrast among them, are
// made as tables (augment_tables.hpp), which the training pass composes instead of applying.
// The geometric operations are augment_geometry.cpp's. Built with -ffp-contract=off, as
// Pillow's float operations are not fused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "stoker/common/error.hpp"
#include "transforms/augment_geometry.hpp"
#include "transforms/augment_tables.hpp"

namespace stoker {

namespace {

// The blend and smooth loops run twice as wide where the CPU has AVX2: GCC and clang build
// each also for AVX2 and pick one when the library loads. The same float operations in the
// same order either way (no FMA: AVX2 alone does not enable it, and this file is built with
// -ffp-contract=off), so the same bytes. The pick is an ifunc: glibc's, and run while the
// program is relocated, before a sanitizer's runtime is set up (under TSan every loader test
// crashed there at start), so sanitized builds and other C libraries keep the one version.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define STOKER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STOKER_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(STOKER_SANITIZED)
#define STOKER_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define STOKER_AVX2_CLONES
#endif

// Image.blend(degenerate, image, alpha) for one byte `b` of the image and `a` of the
// degenerate image: in float, truncated, clipped when the factor extrapolates (outside 0..1);
// the clip is a no-op for factors in 0..1, whose results stay within the two bytes.
inline uint8_t blend_value(int a, int b, float alpha) {
  const float t = static_cast<float>(a) + alpha * static_cast<float>(b - a);
  return static_cast<uint8_t>(static_cast<int>(std::min(std::max(t, 0.0f), 255.0f)));
}

// Image.blend(degenerate, image, alpha), in place over the image; `degenerate` holds as many
// bytes as the image. One straight loop, which the compiler vectorises.
STOKER_AVX2_CLONES void blend(RgbPixels image, float alpha, const uint8_t* degenerate) {
  if (alpha == 1.0f) return;  // Pillow returns the image itself (and 0.0 the degenerate)
  uint8_t* px = image.data;
  const size_t n = image.bytes();
  for (size_t i = 0; i < n; ++i) px[i] = blend_value(degenerate[i], px[i], alpha);
}

ByteTable blend_table(int a, float alpha) {
  ByteTable t;
  for (int v = 0; v < 256; ++v) t[v] = alpha == 1.0f ? v : blend_value(a, v, alpha);
  return t;
}

ChannelTables same_for_all(const ByteTable& t) {
  ChannelTables out;
  out.channel.fill(t);
  return out;
}

// Pillow's RGB -> L.
uint8_t luma(const uint8_t* p) {
  return static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
}

// ImageFilter.SMOOTH into `out` (ImagingFilter3x3 with offset 0). Pillow sums each byte as
// ((0.5 + below) + middle) + above, a row's part being (k * left + k * centre) + k * right in
// float. A row's products are the same for every byte they meet, and its outer part (all k1)
// is the same sum for the row above it and the row below: each is made once here, not three
// and two times, from the same operations on the same values, so the bytes are Pillow's.
STOKER_AVX2_CLONES void smooth(RgbPixels image, uint8_t* out) {
  const int w = image.width, h = image.height;
  std::memcpy(out, image.data, image.bytes());
  if (w < 3 || h < 3) return;  // ImagingFilter copies images smaller than the kernel
  const float k1 = 1.0f / 13.0f, k5 = 5.0f / 13.0f, offset = 0.0f + 0.5f;
  const size_t stride = static_cast<size_t>(w) * 3, n = stride - 6;  // n bytes filtered a row
  thread_local std::vector<float> work;  // grown once to the widest image, then reused
  if (work.size() < 5 * stride) work.resize(5 * stride);
  float* k1_products = work.data();      // of the row read last
  float* middle = k1_products + stride;  // the middle part of the row being written
  float* outer[3] = {middle + stride, middle + 2 * stride, middle + 3 * stride};  // by row % 3
  auto read_row = [&](int r) {
    const uint8_t* row = image.data + r * stride;
    for (size_t i = 0; i < stride; ++i) k1_products[i] = static_cast<float>(row[i]) * k1;
    float* part = outer[r % 3];
    for (size_t i = 0; i < n; ++i)
      part[i] = k1_products[i] + k1_products[i + 3] + k1_products[i + 6];
  };
  read_row(0);
  read_row(1);
  for (int y = 1; y < h - 1; ++y) {
    const uint8_t* row = image.data + y * stride;  // k1_products holds this row's here
    for (size_t i = 0; i < n; ++i) {
      middle[i] = k1_products[i] + static_cast<float>(row[i + 3]) * k5 + k1_products[i + 6];
    }
    read_row(y + 1);
    const float* above = outer[(y - 1) % 3];
    const float* below = outer[(y + 1) % 3];
    uint8_t* o = out + y * stride + 3;
    for (size_t i = 0; i < n; ++i) {
      const float ss = offset + below[i] + middle[i] + above[i];
      o[i] = ss <= 0.0f ? 0 : ss >= 255.0f ? 255 : static_cast<uint8_t>(ss);
    }
  }
}

// ImageOps.autocontrast(image) for one channel's histogram.
ByteTable autocontrast_lut(const uint64_t* hist) {
  ByteTable lut;
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
ByteTable equalize_lut(const uint64_t* hist) {
  ByteTable lut;
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

// Each channel's histogram of the image as `before` maps it.
void channel_histograms(RgbPixels image, const ChannelTables& before, uint64_t (&hist)[3][256]) {
  uint64_t raw[3][256] = {};
  for (size_t i = 0; i < image.bytes(); i += 3) {
    for (int c = 0; c < 3; ++c) ++raw[c][image.data[i + c]];
  }
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v) hist[c][before.channel[c][v]] += raw[c][v];
  }
}

template <class TableOf>
ChannelTables per_channel(RgbPixels image, const ChannelTables& before, TableOf table_of) {
  uint64_t hist[3][256] = {};
  channel_histograms(image, before, hist);
  ChannelTables out;
  for (int c = 0; c < 3; ++c) out.channel[c] = table_of(hist[c]);
  return out;
}

// ImageStat's mean of the luma (its float sum, then the mean rounded), of the image as
// `before` maps it.
int mean_luma(RgbPixels image, const ChannelTables& before) {
  uint64_t hist[256] = {};
  for (size_t i = 0; i < image.bytes(); i += 3) {
    const uint8_t p[3] = {before.channel[0][image.data[i]], before.channel[1][image.data[i + 1]],
                          before.channel[2][image.data[i + 2]]};
    ++hist[luma(p)];
  }
  double sum = 0.0;
  for (int j = 0; j < 256; ++j) sum += static_cast<double>(j * hist[j]);
  return static_cast<int>(sum / static_cast<double>(image.bytes() / 3) + 0.5);
}

void check_finite(double magnitude, AugmentOp op) {
  if (!std::isfinite(magnitude)) {
    throw Error(std::string("magnitude of ") + to_string(op), "must be a finite number",
                "give the operation's magnitude, e.g. a bin of its policy");
  }
}

}  // namespace

ChannelTables ChannelTables::identity() {
  ByteTable t;
  for (int v = 0; v < 256; ++v) t[v] = static_cast<uint8_t>(v);
  return same_for_all(t);
}

ChannelTables ChannelTables::then(const ChannelTables& next) const {
  ChannelTables out;
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v) out.channel[c][v] = next.channel[c][channel[c][v]];
  }
  return out;
}

void ChannelTables::apply(RgbPixels image) const {
  uint8_t* px = image.data;
  for (size_t i = 0; i < image.bytes(); i += 3) {
    for (int c = 0; c < 3; ++c) px[i + c] = channel[c][px[i + c]];
  }
}

bool augment_op_tables(AugmentOp op, double magnitude, RgbPixels image, const ChannelTables& before,
                       ChannelTables& out) {
  check_finite(magnitude, op);
  const float factor = static_cast<float>(1.0 + magnitude);  // the enhancements' factor
  ByteTable t;
  switch (op) {
    case AugmentOp::Identity:
      out = ChannelTables::identity();
      return true;
    case AugmentOp::Brightness:  // the degenerate image is black
      out = same_for_all(blend_table(0, factor));
      return true;
    case AugmentOp::Contrast:  // the degenerate image is the luma's mean, everywhere
      out = same_for_all(blend_table(image.bytes() ? mean_luma(image, before) : 0, factor));
      return true;
    case AugmentOp::Posterize: {
      const double bits = std::trunc(magnitude);
      if (!(bits >= 0 && bits <= 8)) {
        throw Error("magnitude of Posterize",
                    "int(magnitude) must be 0 to 8 bits, got " + std::to_string(magnitude),
                    "give 0..8");
      }
      const int keep = ~((1 << (8 - static_cast<int>(bits))) - 1);
      for (int i = 0; i < 256; ++i) t[i] = static_cast<uint8_t>(i & keep);
      out = same_for_all(t);
      return true;
    }
    case AugmentOp::Solarize:
      for (int i = 0; i < 256; ++i) t[i] = static_cast<uint8_t>(i < magnitude ? i : 255 - i);
      out = same_for_all(t);
      return true;
    case AugmentOp::AutoContrast:
      out = per_channel(image, before, autocontrast_lut);
      return true;
    case AugmentOp::Equalize:
      out = per_channel(image, before, equalize_lut);
      return true;
    case AugmentOp::Invert:
      for (int i = 0; i < 256; ++i) t[i] = static_cast<uint8_t>(255 - i);
      out = same_for_all(t);
      return true;
    default:
      return false;
  }
}

void apply_augment_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation, Fill fill) {
  check_finite(magnitude, op);
  if (op == AugmentOp::Identity || image.bytes() == 0) return;
  ChannelTables tables;
  if (augment_op_tables(op, magnitude, image, ChannelTables::identity(), tables)) {
    return tables.apply(image);
  }
  const float factor = static_cast<float>(1.0 + magnitude);  // the enhancements' factor
  switch (op) {
    case AugmentOp::ShearX:
    case AugmentOp::ShearY:
    case AugmentOp::TranslateX:
    case AugmentOp::TranslateY:
      return affine_op(op, magnitude, image, spare, interpolation, fill);
    case AugmentOp::Rotate:
      return rotate_op(magnitude, image, spare, interpolation, fill);
    case AugmentOp::Color: {  // the degenerate image is the luma, in every channel
      for (size_t i = 0; i < image.bytes(); i += 3) {
        const uint8_t l = luma(image.data + i);
        spare[i] = spare[i + 1] = spare[i + 2] = l;
      }
      return blend(image, factor, spare);
    }
    case AugmentOp::Sharpness:  // the degenerate image is the smoothed image
      smooth(image, spare);
      return blend(image, factor, spare);
    case AugmentOp::HorizontalFlip:
    case AugmentOp::VerticalFlip:
      return flip_op(op == AugmentOp::HorizontalFlip, image, spare);
    default:
      return;  // the table operations, applied above
  }
}

}  // namespace stoker
