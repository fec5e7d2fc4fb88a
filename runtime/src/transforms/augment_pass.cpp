// The augmentations of the training pass (augment_pass.hpp): the policy's operations on the
// resized crop's bytes, the bytes normalised into the slot, and RandomErasing, each random
// draw from the sample's own stream of the keyed generator.
#include "transforms/augment_pass.hpp"

#include <cmath>
#include <cstring>

#include "stoker/transforms/augment_ops.hpp"
#include "transforms/counter_rng.hpp"
#include "transforms/half.hpp"

namespace stoker {

namespace {

// The generator's stream for RandomErasing (crop.cpp has 1 and 2, augment_draw.cpp 3).
constexpr uint64_t kEraseStream = 4;

template <class T, class Convert>
void write_as(RgbPixels image, const ResampleTarget& t, Convert convert) {
  T* out = static_cast<T*>(t.out);
  const size_t plane = static_cast<size_t>(t.width) * t.height;
  for (size_t p = 0; p < plane; ++p) {
    for (int c = 0; c < 3; ++c) {
      const T v = convert(image.data[3 * p + c], c);
      if (t.layout == Layout::CHW) {
        out[c * plane + p] = v;
      } else {
        out[3 * p + c] = v;
      }
    }
  }
}

}  // namespace

bool augments(const ImageTransformOptions& o) {
  return o.train && (o.auto_augment_policy || o.random_erase_prob > 0);
}

std::optional<AugmentDraw> augment_draw(const ImageTransformOptions& o) {
  if (!o.auto_augment_policy) return std::nullopt;
  AugmentPolicyOptions p{*o.auto_augment_policy};
  p.magnitude = o.ra_magnitude;
  return AugmentDraw(p, o.size, o.size);
}

void auto_augment(const AugmentDraw& draw, const SampleKey& key, RgbPixels image, uint8_t* spare,
                  Interpolation interpolation) {
  thread_local std::vector<AugmentChoice> choices;  // its capacity reused from sample to sample
  draw_augmentations(draw, key, choices);
  for (const AugmentChoice& c : choices) {
    apply_augment_op(c.op, c.magnitude, image, spare, interpolation);
  }
}

void write_slot(RgbPixels image, const Normalization& norm, const ResampleTarget& t) {
  auto normalised = [&](uint8_t v, int c) {
    return static_cast<float>(v) * norm.scale[c] + norm.bias[c];
  };
  if (t.dtype == DType::U8) {
    write_as<uint8_t>(image, t, [](uint8_t v, int) { return v; });
  } else if (t.dtype == DType::F16) {
    write_as<uint16_t>(image, t, [&](uint8_t v, int c) { return float_to_half(normalised(v, c)); });
  } else {
    write_as<float>(image, t, normalised);
  }
}

void random_erase(const ImageTransformOptions& o, const SampleKey& key, const ResampleTarget& t) {
  if (!o.train || o.random_erase_prob <= 0) return;
  CounterRng rng(key, kEraseStream);
  if (!(rng.uniform() < o.random_erase_prob)) return;
  const double area = static_cast<double>(t.width) * t.height;
  const double log_lo = std::log(0.3), log_hi = std::log(3.3);
  for (int attempt = 0; attempt < 10; ++attempt) {  // torchvision's 10 tries, then no box
    const double erase_area = area * rng.uniform(0.02, 0.33);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const int h = static_cast<int>(std::nearbyint(std::sqrt(erase_area * aspect)));
    const int w = static_cast<int>(std::nearbyint(std::sqrt(erase_area / aspect)));
    if (!(h < t.height && w < t.width)) continue;
    const int top = static_cast<int>(rng.below(t.height - h + 1));
    const int left = static_cast<int>(rng.below(t.width - w + 1));
    const size_t elem = dtype_size(t.dtype);
    auto* out = static_cast<std::byte*>(t.out);
    for (int y = top; y < top + h; ++y) {
      if (t.layout == Layout::HWC) {
        std::memset(out + (static_cast<size_t>(y) * t.width + left) * 3 * elem, 0, w * 3 * elem);
        continue;
      }
      for (int c = 0; c < 3; ++c) {
        const size_t at = (static_cast<size_t>(c) * t.height + y) * t.width + left;
        std::memset(out + at * elem, 0, w * elem);  // 0 in float32, float16 and uint8 alike
      }
    }
    return;
  }
}

}  // namespace stoker
