// Crop parameters, following torchvision's RandomResizedCrop / Resize+CenterCrop exactly,
// with every draw taken from the sample's counter-based generator.
#include <algorithm>
#include <cmath>

#include "stoker/transforms/crop.hpp"
#include "transforms/counter_rng.hpp"

namespace stoker {

namespace {
// Independent decision streams of one sample.
constexpr uint64_t kCropStream = 1, kFlipStream = 2;
}  // namespace

CropBox random_resized_crop(int width, int height, const SampleKey& key,
                            const ImageTransformOptions& opts) {
  CounterRng rng(key, kCropStream);
  const double area = static_cast<double>(width) * height;
  const double log_lo = std::log(opts.ratio_min), log_hi = std::log(opts.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(opts.scale_min, opts.scale_max);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    // Python's round() rounds half to even, as nearbyint does in the default mode.
    const int w = static_cast<int>(std::nearbyint(std::sqrt(target_area * aspect)));
    const int h = static_cast<int>(std::nearbyint(std::sqrt(target_area / aspect)));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const auto y = static_cast<double>(rng.below(static_cast<uint64_t>(height - h + 1)));
      const auto x = static_cast<double>(rng.below(static_cast<uint64_t>(width - w + 1)));
      return {x, y, static_cast<double>(w), static_cast<double>(h)};
    }
  }
  // Fallback: the largest centred crop whose aspect ratio lies within [ratio_min, ratio_max].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < opts.ratio_min) {
    h = static_cast<int>(std::nearbyint(w / opts.ratio_min));
  } else if (in_ratio > opts.ratio_max) {
    w = static_cast<int>(std::nearbyint(h * opts.ratio_max));
  }
  return {static_cast<double>((width - w) / 2), static_cast<double>((height - h) / 2),
          static_cast<double>(w), static_cast<double>(h)};
}

CropBox center_crop(int width, int height, const ImageTransformOptions& opts) {
  // Resize(resize_shorter): the shorter side becomes resize_shorter, the longer one is
  // truncated as torchvision does; then CenterCrop(size) rounds the offsets.
  const bool wide = width >= height;
  const int shorter = wide ? height : width, longer = wide ? width : height;
  const int new_long =
      static_cast<int>(static_cast<int64_t>(opts.resize_shorter) * longer / std::max(shorter, 1));
  const int rw = wide ? new_long : opts.resize_shorter;
  const int rh = wide ? opts.resize_shorter : new_long;
  const double left = std::nearbyint((rw - opts.size) / 2.0);
  const double top = std::nearbyint((rh - opts.size) / 2.0);
  const double sx = static_cast<double>(width) / rw, sy = static_cast<double>(height) / rh;
  // PIL's nearest resize steps by (double)width / rw over the whole image.
  const NearestAxis nx{0, static_cast<double>(width) / rw, static_cast<int>(left)};
  const NearestAxis ny{0, static_cast<double>(height) / rh, static_cast<int>(top)};
  return {std::max(0.0, left * sx),
          std::max(0.0, top * sy),
          std::min<double>(width, opts.size * sx),
          std::min<double>(height, opts.size * sy),
          nx,
          ny};
}

bool random_flip(const SampleKey& key, const ImageTransformOptions& opts) {
  if (!opts.train || opts.flip_p <= 0) return false;
  CounterRng rng(key, kFlipStream);
  return rng.uniform() < opts.flip_p;
}

}  // namespace stoker
