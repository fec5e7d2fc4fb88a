#include "transforms/resample.hpp"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "stoker/common/error.hpp"
#include "transforms/resample_kernel.hpp"

namespace stoker {

namespace {

inline double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// PIL's bicubic convolution (a = -0.5): negative lobes, so outputs overshoot and are clamped.
inline double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// A filter and its support at scale 1; the support and the argument widen by the downscale
// factor when antialiasing.
struct Filter {
  double (*weight)(double);
  double support;
};
Filter filter_of(Interpolation interpolation) {
  return interpolation == Interpolation::Bicubic ? Filter{bicubic, 2.0} : Filter{triangle, 1.0};
}

double filter_scale(double box_size, int out_size, bool antialias) {
  const double scale = box_size / out_size;
  return antialias ? std::max(scale, 1.0) : 1.0;
}

// One axis of a box: [start, start + size) of `in` pixels resampled to `out` outputs, the
// filter reading pixels [lo, hi) only (the image, or the crop when it is cut out first).
struct Axis {
  double start, size;
  int in, out;
  bool antialias;
  Interpolation interpolation;
  NearestAxis nearest;
  int lo, hi;
};

// The inputs with a non-zero weight for an output centred at `center`: pixel x (centre
// x + 0.5) counts when |x + 0.5 - center| < support. Clipped to [a.lo, a.hi); never empty.
struct Window {
  int first, count;
};
Window window(double center, double support, const Axis& a) {
  const int first = std::max(static_cast<int>(std::floor(center - support - 0.5)) + 1, a.lo);
  const int last = std::min(static_cast<int>(std::ceil(center + support - 0.5)) - 1, a.hi - 1);
  const int f = std::min(first, a.hi - 1);
  return {f, std::max(last - f + 1, 1)};
}

// Taps needed for the axis: the widest window of non-zero weights (1 for nearest).
int axis_taps(const Axis& a) {
  if (a.interpolation == Interpolation::Nearest) return 1;
  // The exact widest window (PIL's bound, 2*ceil(support)+1, wastes up to 40 % of the
  // multiply-adds on zero weights).
  const double scale = a.size / a.out;
  const double support =
      filter_of(a.interpolation).support * filter_scale(a.size, a.out, a.antialias);
  int taps = 1;
  for (int i = 0; i < a.out; ++i) {
    taps = std::max(taps, window(a.start + (i + 0.5) * scale, support, a).count);
  }
  return std::min(taps, a.in);
}

// PIL's NEAREST resize (ImagingScaleAffine): the position starts at half a step and grows by
// one step per output, summed in double as PIL sums it; the pixel is its integer part.
void nearest_axis(const Axis& a, AxisWeights& w) {
  const NearestAxis n = a.nearest.step > 0 ? a.nearest : NearestAxis{a.start, a.size / a.out, 0};
  const double whole = std::floor(n.origin), rest = n.origin - whole;  // 0 with d = 1
  double position = n.step * 0.5;
  for (int j = 0; j < n.skip; ++j) position += n.step;
  w.lo = a.in;
  w.hi = 0;
  for (int i = 0; i < a.out; ++i, position += n.step) {
    const int x = static_cast<int>(whole) + static_cast<int>(position + rest);
    w.start[i] = std::clamp(x, 0, a.in - 1);
    w.weights[i] = 1.0f;
    w.lo = std::min(w.lo, w.start[i]);
    w.hi = std::max(w.hi, w.start[i] + 1);
  }
}

// Fills `w`, whose taps is axis_taps(a) and whose start/weights have room for a.out and
// a.out * taps entries.
void compute_axis(const Axis& a, AxisWeights& w) {
  if (a.interpolation == Interpolation::Nearest) return nearest_axis(a, w);
  const Filter filter = filter_of(a.interpolation);
  const double scale = a.size / a.out, fscale = filter_scale(a.size, a.out, a.antialias);
  const double support = filter.support * fscale, inv = 1.0 / fscale;
  w.lo = a.in;
  w.hi = 0;
  for (int i = 0; i < a.out; ++i) {
    const double center = a.start + (i + 0.5) * scale;
    const Window win = window(center, support, a);
    // Every output uses `taps` slots from `first`, kept inside the image.
    const int first = std::max(0, std::min(win.first, a.in - w.taps));
    float* slot = w.weights + static_cast<size_t>(i) * w.taps;
    std::fill(slot, slot + w.taps, 0.0f);
    double total = 0;
    for (int x = win.first; x < win.first + win.count; ++x) {
      total += filter.weight((x - center + 0.5) * inv);
    }
    for (int x = win.first; x < win.first + win.count && x - first < w.taps; ++x) {
      const double weight = filter.weight((x - center + 0.5) * inv);
      slot[x - first] = static_cast<float>(total != 0 ? weight / total : 1.0 / win.count);
    }
    w.start[i] = first;
    w.lo = std::min(w.lo, first);
    w.hi = std::max(w.hi, first + w.taps);
  }
}

// A box cut out before the resize (crop_first) bounds the filter's reach: the crop's whole
// pixels, [floor(start), ceil(start + size)) after a DCT downscale.
Axis axis(double start, double size, int in, const ResampleBox& b, NearestAxis nearest) {
  const int lo = b.crop_first ? std::clamp(static_cast<int>(std::floor(start)), 0, in - 1) : 0;
  const int hi =
      b.crop_first ? std::clamp(static_cast<int>(std::ceil(start + size)), lo + 1, in) : in;
  return {start, size, in, b.out, b.antialias, b.interpolation, nearest, lo, hi};
}
Axis x_axis(const ResampleBox& b) {
  return axis(b.x, b.w, b.in_w, b, b.nearest_x);
}
Axis y_axis(const ResampleBox& b) {
  return axis(b.y, b.h, b.in_h, b, b.nearest_y);
}

}  // namespace

BoxWeights box_taps(const ResampleBox& box) {
  BoxWeights w;
  w.out = box.out;
  w.h.taps = axis_taps(x_axis(box));
  w.v.taps = axis_taps(y_axis(box));
  return w;
}

void fill_box_weights(const ResampleBox& box, int* starts, float* weights, BoxWeights& w) {
  w.h.start = starts;
  w.v.start = starts + box.out;
  w.h.weights = weights;
  w.v.weights = weights + static_cast<size_t>(box.out) * w.h.taps;
  compute_axis(x_axis(box), w.h);
  compute_axis(y_axis(box), w.v);
}

BoxWeights box_weights(const ResampleBox& box, std::vector<int>& starts,
                       std::vector<float>& weights) {
  BoxWeights w = box_taps(box);
  starts.resize(w.start_count());
  weights.resize(w.weight_count());
  fill_box_weights(box, starts.data(), weights.data(), w);
  return w;
}

Normalization Normalization::from(const ImageTransformOptions& opts) {
  Normalization n;
  for (int c = 0; c < 3; ++c) {
    n.scale[c] = 1.0f / (255.0f * opts.std[c]);
    n.bias[c] = -opts.mean[c] / opts.std[c];
  }
  return n;
}

bool resample_kernel_available(ResampleKernel kernel) {
  if (kernel == ResampleKernel::Portable) return true;
#if defined(__x86_64__)
  // __builtin_cpu_supports checks that the OS saves the AVX registers too; F16C (all AVX2
  // CPUs have it in practice) is read from CPUID leaf 1, which clang's builtin cannot name.
  static const bool avx2 = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return resample_avx2_compiled() && __builtin_cpu_supports("avx2") &&
           __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return avx2;
#else
  return false;
#endif
}

ResampleKernel best_resample_kernel() {
  static const ResampleKernel best = resample_kernel_available(ResampleKernel::Avx2)
                                         ? ResampleKernel::Avx2
                                         : ResampleKernel::Portable;
  return best;
}

const char* to_string(ResampleKernel kernel) {
  return kernel == ResampleKernel::Avx2 ? "avx2" : "portable";
}

ResampleKernel resample_kernel_from(const std::optional<std::string>& simd) {
  if (!simd || simd->empty() || *simd == "auto") return best_resample_kernel();
  if (*simd == "portable") return ResampleKernel::Portable;
  if (*simd != "avx2") {
    throw Error("STOKER_SIMD", "must be auto, avx2 or portable, got '" + *simd + "'",
                "unset it to let stoker choose");
  }
  if (!resample_kernel_available(ResampleKernel::Avx2)) {
    throw Error("STOKER_SIMD", "avx2: this CPU or build has no AVX2 and F16C",
                "unset it, or set it to portable");
  }
  return ResampleKernel::Avx2;
}

size_t resample_work_floats(const AxisWeights& h, const AxisWeights& v, int width,
                            ResampleKernel kernel) {
  const bool avx2 = kernel == ResampleKernel::Avx2 && resample_kernel_available(kernel);
  return resample_row_floats(h) + (avx2 ? resample_avx2_work_floats(h, v, width) : 0);
}

void resample(const DecodedRegion& region, const AxisWeights& h, const AxisWeights& v, bool flip,
              const Normalization& norm, const ResampleTarget& target, float* work,
              ResampleKernel kernel) {
  // A kernel this CPU cannot run falls back to the portable one (same output).
  if (kernel == ResampleKernel::Avx2 && resample_kernel_available(kernel) &&
      resample_avx2(region, h, v, flip, norm, target, work)) {
    return;
  }
  resample_portable(region, h, v, flip, norm, target, work);
}

}  // namespace stoker
