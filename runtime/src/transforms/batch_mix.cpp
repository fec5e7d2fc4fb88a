// MixUp and CutMix of a batch (batch_mix.hpp): the reference's arithmetic, step by step, and
// its draws from the batch's stream of the keyed generator.
#include "stoker/transforms/batch_mix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>

#include "stoker/common/error.hpp"
#include "transforms/counter_rng.hpp"
#include "transforms/half.hpp"

namespace stoker {

namespace {

// The generator's stream for a batch's mixing. Its key is the batch's, not a sample's
// (crop.cpp has streams 1 and 2, augment_draw.cpp 3, augment_pass.cpp 4): far from
// them, so that the per-sample streams may grow without meeting it.
constexpr uint64_t kMixStream = 0x6d6978;

// A standard normal draw (Box-Muller: one of the pair).
double normal(CounterRng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]: its log is finite
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// log of a Gamma(a, 1) draw (Marsaglia and Tsang; below a = 1 from Gamma(a + 1) times
// U^(1/a), kept as a logarithm so that a small alpha's tiny draws do not underflow to 0).
double log_gamma_draw(CounterRng& rng, double a) {
  double boost = 0.0;
  if (a < 1.0) {
    boost = std::log(1.0 - rng.uniform()) / a;
    a += 1.0;
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v) + boost;
  }
}

// One sample's value at element e, as float, and back.
float load(const std::byte* p, size_t e, DType t) {
  switch (t) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p + e * 4, 4);
      return v;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, p + e * 2, 2);
      return half_to_float(h);
    }
    default:
      return static_cast<float>(std::to_integer<uint8_t>(p[e]));
  }
}

void store(std::byte* p, size_t e, DType t, float v) {
  switch (t) {
    case DType::F32:
      std::memcpy(p + e * 4, &v, 4);
      return;
    case DType::F16: {
      const uint16_t h = float_to_half(v);
      std::memcpy(p + e * 2, &h, 2);
      return;
    }
    default:  // a convex mix of 0..255 stays there; clamped all the same
      p[e] = static_cast<std::byte>(std::clamp(std::nearbyint(v), 0.0f, 255.0f));
      return;
  }
}

// x = x * a + y * b, element by element (F32: exactly torch's two mul_ and one add_).
void mix_sample(std::byte* x, const std::byte* y, size_t elems, DType t, float a, float b) {
  if (t == DType::F32) {
    auto* xf = reinterpret_cast<float*>(x);
    const auto* yf = reinterpret_cast<const float*>(y);
    for (size_t e = 0; e < elems; ++e) {
      const float mine = xf[e] * a, theirs = yf[e] * b;
      xf[e] = mine + theirs;
    }
    return;
  }
  for (size_t e = 0; e < elems; ++e) {
    const float mine = load(x, e, t) * a, theirs = load(y, e, t) * b;
    store(x, e, t, mine + theirs);
  }
}

// Copies the box of `from` onto `to`: rows y1..y2-1, columns x1..x2-1, every channel.
void paste_box(std::byte* to, const std::byte* from, const MixDraw& d, const MixImage& im) {
  if (d.x2 <= d.x1 || d.y2 <= d.y1) return;
  const size_t item = dtype_size(im.dtype), w = static_cast<size_t>(im.width);
  const size_t h = static_cast<size_t>(im.height);
  const size_t x1 = static_cast<size_t>(d.x1), cols = static_cast<size_t>(d.x2 - d.x1);
  for (size_t y = static_cast<size_t>(d.y1); y < static_cast<size_t>(d.y2); ++y) {
    if (im.layout == Layout::HWC) {
      const size_t at = (y * w + x1) * 3 * item;
      std::memcpy(to + at, from + at, cols * 3 * item);
      continue;
    }
    for (size_t c = 0; c < 3; ++c) {
      const size_t at = ((c * h + y) * w + x1) * item;
      std::memcpy(to + at, from + at, cols * item);
    }
  }
}

}  // namespace

size_t MixImage::bytes() const {
  return static_cast<size_t>(height) * static_cast<size_t>(width) * 3 * dtype_size(dtype);
}

MixDraw cutmix_box(double lambda, int r_x, int r_y, int height, int width) {
  const double r = 0.5 * std::sqrt(1.0 - lambda);
  const int r_w_half = static_cast<int>(r * width), r_h_half = static_cast<int>(r * height);
  MixDraw d;
  d.kind = MixDraw::Kind::CutMix;
  d.beta = lambda;
  d.r_x = r_x;
  d.r_y = r_y;
  d.x1 = std::max(r_x - r_w_half, 0);
  d.y1 = std::max(r_y - r_h_half, 0);
  d.x2 = std::min(r_x + r_w_half, width);
  d.y2 = std::min(r_y + r_h_half, height);
  const double area = static_cast<double>(d.x2 - d.x1) * static_cast<double>(d.y2 - d.y1);
  d.lambda = 1.0 - area / (static_cast<double>(width) * static_cast<double>(height));
  return d;
}

double beta_draw(CounterRng& rng, double alpha) {
  const double g1 = log_gamma_draw(rng, alpha), g2 = log_gamma_draw(rng, alpha);
  return 1.0 / (1.0 + std::exp(g2 - g1));  // g1 / (g1 + g2)
}

void mix_images(const MixDraw& d, const MixImage& image, std::byte* data, size_t count,
                std::byte* spare) {
  if (count == 0) return;
  const size_t bytes = image.bytes(), elems = bytes / dtype_size(image.dtype);
  // The last sample's unmixed copy is sample 0's partner; the others' partners are still
  // unmixed when each is mixed, from the last down.
  std::memcpy(spare, data + (count - 1) * bytes, bytes);
  const float a = static_cast<float>(d.lambda), b = static_cast<float>(1.0 - d.lambda);
  for (size_t i = count; i-- > 0;) {
    std::byte* x = data + i * bytes;
    const std::byte* y = i == 0 ? spare : x - bytes;
    if (d.kind == MixDraw::Kind::MixUp) {
      mix_sample(x, y, elems, image.dtype, a, b);
    } else {
      paste_box(x, y, d, image);
    }
  }
}

void mix_targets(double lambda, const int64_t* labels, size_t count, size_t classes, float* out) {
  const float a = static_cast<float>(lambda), b = static_cast<float>(1.0 - lambda);
  for (size_t i = 0; i < count; ++i) {
    float* row = out + i * classes;
    std::fill(row, row + classes, 0.0f);
    const auto mine = static_cast<size_t>(labels[i]);
    const auto theirs = static_cast<size_t>(labels[i == 0 ? count - 1 : i - 1]);
    // one_hot * a + rolled one_hot * b: a + b where both are 1, else a, b or 0 + 0.
    row[mine] = a;
    row[theirs] = mine == theirs ? a + b : b;
  }
}

BatchMix::BatchMix(const ImageTransformOptions& o, uint64_t classes)
    : mixup_alpha_(o.mixup_alpha), cutmix_alpha_(o.cutmix_alpha), classes_(classes) {
  if (classes_ == 0) {
    throw Error("num_classes",
                "mixup_alpha and cutmix_alpha need the class count of the one-hot "
                "targets, and the dataset names no classes (tar shards label by number)",
                "give num_classes (above the largest label)");
  }
  image_.dtype = o.dtype;
  image_.layout = o.layout;
  image_.height = image_.width = o.size;
}

MixDraw BatchMix::draw(const SampleKey& key) const {
  CounterRng rng(key, kMixStream);
  bool cutmix = mixup_alpha_ <= 0;
  if (mixup_alpha_ > 0 && cutmix_alpha_ > 0) cutmix = rng.below(2) == 1;  // RandomChoice
  MixDraw d;
  // As float32, which the reference's Dirichlet of a float32 tensor gives it.
  d.lambda = d.beta = static_cast<float>(beta_draw(rng, cutmix ? cutmix_alpha_ : mixup_alpha_));
  if (!cutmix) return d;
  const int r_x = static_cast<int>(rng.below(static_cast<uint64_t>(image_.width)));
  const int r_y = static_cast<int>(rng.below(static_cast<uint64_t>(image_.height)));
  return cutmix_box(d.lambda, r_x, r_y, image_.height, image_.width);
}

void BatchMix::apply(const MixDraw& d, std::byte* data, const int64_t* labels, size_t count,
                     float* out, std::byte* spare) const {
  mix_images(d, image_, data, count, spare);
  mix_targets(d.lambda, labels, count, classes_, out);
}

std::string BatchMix::describe() const {
  char text[160];
  if (mixup_alpha_ > 0 && cutmix_alpha_ > 0) {
    std::snprintf(text, sizeof text, "MixUp(alpha=%g) or CutMix(alpha=%g) per batch", mixup_alpha_,
                  cutmix_alpha_);
  } else if (mixup_alpha_ > 0) {
    std::snprintf(text, sizeof text, "MixUp(alpha=%g) per batch", mixup_alpha_);
  } else {
    std::snprintf(text, sizeof text, "CutMix(alpha=%g) per batch", cutmix_alpha_);
  }
  return std::string(text) + ", targets of " + std::to_string(classes_) + " classes";
}

}  // namespace stoker
