// The augmentations of the training pass (augment_pass.hpp): the policy's operations on the
// resized crop's bytes, the bytes normalised into the slot, and RandomErasing, each random
// draw from the sample's own stream of the keyed generator. The operations that are tables
// per channel are not applied to the bytes but composed, and written with the normalisation.
#include "transforms/augment_pass.hpp"

#include <cmath>
#include <cstring>

#include "stoker/transforms/augment_ops.hpp"
#include "stoker/transforms/augmix.hpp"
#include "transforms/augment_tables.hpp"
#include "transforms/counter_rng.hpp"
#include "transforms/half.hpp"

namespace stoker {

namespace {

// The generator's stream for RandomErasing (crop.cpp has 1 and 2, augment_draw.cpp 3).
constexpr uint64_t kEraseStream = 4;

// Each byte of each channel's value in the slot, looked up: the image's bytes are 0..255, so
// the policy's pending tables and the normalisation come to one table of 256 per channel.
template <class T>
using SlotTables = std::array<std::array<T, 256>, 3>;

template <class T>
void write_through(RgbPixels image, const SlotTables<T>& table, const ResampleTarget& t) {
  T* out = static_cast<T*>(t.out);
  const size_t plane = static_cast<size_t>(t.width) * t.height;
  const uint8_t* in = image.data;
  if (t.layout == Layout::CHW) {
    T *r = out, *g = out + plane, *b = out + 2 * plane;
    for (size_t p = 0; p < plane; ++p, in += 3) {
      r[p] = table[0][in[0]];
      g[p] = table[1][in[1]];
      b[p] = table[2][in[2]];
    }
    return;
  }
  for (size_t p = 0; p < plane; ++p, in += 3, out += 3) {
    for (int c = 0; c < 3; ++c) out[c] = table[c][in[c]];
  }
}

template <class T, class Convert>
void write_converted(RgbPixels image, const ChannelTables& tables, const ResampleTarget& t,
                     Convert convert) {
  SlotTables<T> table;
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v) table[c][v] = convert(tables.channel[c][v], c);
  }
  write_through(image, table, t);
}

}  // namespace

bool augments(const ImageTransformOptions& o) {
  return o.train && (o.auto_augment_policy || o.random_erase_prob > 0);
}

std::optional<AugmentDraw> augment_draw(const ImageTransformOptions& o) {
  if (!o.auto_augment_policy) return std::nullopt;
  if (*o.auto_augment_policy == AugmentPolicy::AugMix) check_augmix_interpolation(o.interpolation);
  AugmentPolicyOptions p{*o.auto_augment_policy};
  p.magnitude = o.ra_magnitude;
  return AugmentDraw(p, o.size, o.size);
}

ChannelTables auto_augment(const AugmentDraw& draw, const SampleKey& key, RgbPixels image,
                           uint8_t* spare, Interpolation interpolation) {
  if (draw.options.policy == AugmentPolicy::AugMix) {  // a mix of chains, not table steps
    augmix(draw_augmix(draw.space, key), image, interpolation);
    return ChannelTables::identity();
  }
  thread_local std::vector<AugmentChoice> choices;  // its capacity reused from sample to sample
  draw_augmentations(draw, key, choices);
  ChannelTables pending = ChannelTables::identity(), table;
  bool mapped = false;  // whether `pending` is more than the identity
  for (const AugmentChoice& c : choices) {
    if (augment_op_tables(c.op, c.magnitude, image, pending, table)) {
      if (c.op == AugmentOp::Identity) continue;
      pending = pending.then(table);
      mapped = true;
      continue;
    }
    if (mapped) {  // the operation reads the bytes themselves
      pending.apply(image);
      pending = ChannelTables::identity();
      mapped = false;
    }
    apply_augment_op(c.op, c.magnitude, image, spare, interpolation);
  }
  return pending;
}

void write_slot(RgbPixels image, const ChannelTables& tables, const Normalization& norm,
                const ResampleTarget& t) {
  auto normalised = [&](uint8_t v, int c) {
    return static_cast<float>(v) * norm.scale[c] + norm.bias[c];
  };
  if (t.dtype == DType::U8) {
    write_through(image, tables.channel, t);
  } else if (t.dtype == DType::F16) {
    write_converted<uint16_t>(image, tables, t,
                              [&](uint8_t v, int c) { return float_to_half(normalised(v, c)); });
  } else {
    write_converted<float>(image, tables, t, normalised);
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
