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

double filter_scale(double box_size, int out_size, bool antialias) {
  const double scale = box_size / out_size;
  return antialias ? std::max(scale, 1.0) : 1.0;
}

// The inputs with a non-zero weight for an output centred at `center`: pixel x (centre
// x + 0.5) counts when |x + 0.5 - center| < support. Clipped to the image; never empty.
struct Window {
  int first, count;
};
Window window(double center, double support, int in_size) {
  const int first = std::max(static_cast<int>(std::floor(center - support - 0.5)) + 1, 0);
  const int last = std::min(static_cast<int>(std::ceil(center + support - 0.5)) - 1, in_size - 1);
  const int f = std::min(first, in_size - 1);
  return {f, std::max(last - f + 1, 1)};
}

// Taps needed to resample the box [box_start, box_start + box_size) of an axis of
// `in_size` pixels to `out_size` outputs: the widest window of non-zero weights.
int axis_taps(double box_start, double box_size, int out_size, int in_size, bool antialias) {
  // The exact widest window (PIL's bound, 2*ceil(support)+1, wastes up to 40 % of the
  // multiply-adds on zero weights).
  const double scale = box_size / out_size;
  const double support = filter_scale(box_size, out_size, antialias);  // triangle support: 1
  int taps = 1;
  for (int i = 0; i < out_size; ++i) {
    taps = std::max(taps, window(box_start + (i + 0.5) * scale, support, in_size).count);
  }
  return std::min(taps, in_size);
}

// Fills `w`, whose taps is axis_taps(...) and whose start/weights have room for out_size and
// out_size * taps entries.
void compute_axis(double box_start, double box_size, int in_size, int out_size, bool antialias,
                  AxisWeights& w) {
  const double scale = box_size / out_size;
  const double support = filter_scale(box_size, out_size, antialias), inv = 1.0 / support;
  w.lo = in_size;
  w.hi = 0;
  for (int i = 0; i < out_size; ++i) {
    const double center = box_start + (i + 0.5) * scale;
    const Window win = window(center, support, in_size);
    // Every output uses `taps` slots from `first`, kept inside the image.
    const int first = std::max(0, std::min(win.first, in_size - w.taps));
    float* slot = w.weights + static_cast<size_t>(i) * w.taps;
    std::fill(slot, slot + w.taps, 0.0f);
    double total = 0;
    for (int x = win.first; x < win.first + win.count; ++x) {
      total += triangle((x - center + 0.5) * inv);
    }
    for (int x = win.first; x < win.first + win.count && x - first < w.taps; ++x) {
      const double weight = triangle((x - center + 0.5) * inv);
      slot[x - first] = static_cast<float>(total > 0 ? weight / total : 1.0 / win.count);
    }
    w.start[i] = first;
    w.lo = std::min(w.lo, first);
    w.hi = std::max(w.hi, first + w.taps);
  }
}

}  // namespace

BoxWeights box_taps(const ResampleBox& box) {
  BoxWeights w;
  w.out = box.out;
  w.h.taps = axis_taps(box.x, box.w, box.out, box.in_w, box.antialias);
  w.v.taps = axis_taps(box.y, box.h, box.out, box.in_h, box.antialias);
  return w;
}

void fill_box_weights(const ResampleBox& box, int* starts, float* weights, BoxWeights& w) {
  w.h.start = starts;
  w.v.start = starts + box.out;
  w.h.weights = weights;
  w.v.weights = weights + static_cast<size_t>(box.out) * w.h.taps;
  compute_axis(box.x, box.w, box.in_w, box.out, box.antialias, w.h);
  compute_axis(box.y, box.h, box.in_h, box.out, box.antialias, w.v);
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
