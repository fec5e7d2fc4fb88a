#include "transforms/resample.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "transforms/half.hpp"

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

// Four floats in one SSE/NEON register (GCC/Clang vector extension): one multiply-add per
// tap handles a whole RGB pixel (the fourth lane is ignored).
typedef float V4 __attribute__((vector_size(16)));
typedef uint8_t B4 __attribute__((vector_size(4)));

inline V4 load4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline V4 load4(const uint8_t* p) {
  B4 b;
  std::memcpy(&b, p, sizeof b);
  return __builtin_convertvector(b, V4);
}
inline void store4(float* p, V4 v) { std::memcpy(p, &v, sizeof v); }

// row[0, n) = sum_k w[k] * src_k[0, n), rows src + k * stride: the vertical filter over the
// columns the horizontal filter needs.
void combine_rows(const uint8_t* src, size_t stride, const float* w, int taps, int n,
                  float* row) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    V4 acc = w[0] * load4(src + i);
    for (int k = 1; k < taps; ++k) acc += w[k] * load4(src + k * stride + i);
    store4(row + i, acc);
  }
  for (; i < n; ++i) {
    float acc = 0;
    for (int k = 0; k < taps; ++k) acc += w[k] * static_cast<float>(src[k * stride + i]);
    row[i] = acc;
  }
}

// The fused pass. `Convert` maps (value on 0..255, channel) to the output type. Each
// output row combines its input rows vertically, then each output pixel combines `taps`
// pixels of that row horizontally, RGB at once.
template <class Out, bool kChw, class Convert>
void resample_into(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, bool flip,
                   Out* out, int width, int height, float* row, Convert convert) {
  const int n = (h.hi - h.lo) * 3;
  row[n] = 0;  // read (and ignored) as the 4th lane of the last pixel
  const size_t plane = static_cast<size_t>(width) * height;
  for (int y = 0; y < height; ++y) {
    combine_rows(r.pixel(h.lo, v.start[y]), r.stride, v.weights + static_cast<size_t>(y) * v.taps,
                 v.taps, n, row);
    Out* dst = out + static_cast<size_t>(y) * width * (kChw ? 1 : 3);
    for (int x = 0; x < width; ++x) {
      const int sx = flip ? width - 1 - x : x;
      const float* hw = h.weights + static_cast<size_t>(sx) * h.taps;
      const float* p = row + (h.start[sx] - h.lo) * 3;
      V4 acc = hw[0] * load4(p);
      for (int k = 1; k < h.taps; ++k) acc += hw[k] * load4(p + 3 * k);
      if constexpr (kChw) {
        dst[x] = convert(acc[0], 0);
        dst[plane + x] = convert(acc[1], 1);
        dst[2 * plane + x] = convert(acc[2], 2);
      } else {
        dst[3 * x] = convert(acc[0], 0);
        dst[3 * x + 1] = convert(acc[1], 1);
        dst[3 * x + 2] = convert(acc[2], 2);
      }
    }
  }
}

template <class Out, class Convert>
void dispatch_layout(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v,
                     bool flip, const ResampleTarget& t, float* row, Convert convert) {
  auto* out = static_cast<Out*>(t.out);
  if (t.layout == Layout::CHW) {
    resample_into<Out, true>(r, h, v, flip, out, t.width, t.height, row, convert);
  } else {
    resample_into<Out, false>(r, h, v, flip, out, t.width, t.height, row, convert);
  }
}

}  // namespace

int axis_taps(double box_size, int out_size, int in_size, bool antialias) {
  const double support = filter_scale(box_size, out_size, antialias);  // triangle support: 1
  return std::min(static_cast<int>(std::ceil(support)) * 2 + 1, in_size);
}

void compute_axis(double box_start, double box_size, int in_size, int out_size, bool antialias,
                  AxisWeights& w) {
  const double scale = box_size / out_size;
  const double fscale = filter_scale(box_size, out_size, antialias);
  const double support = fscale, inv = 1.0 / fscale;
  w.lo = in_size;
  w.hi = 0;
  for (int i = 0; i < out_size; ++i) {
    const double center = box_start + (i + 0.5) * scale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::clamp(static_cast<int>(center + support + 0.5), xmin + 1, in_size);
    // Every output uses `taps` slots from `first`, kept inside the image.
    const int first = std::max(0, std::min(xmin, in_size - w.taps));
    float* slot = w.weights + static_cast<size_t>(i) * w.taps;
    std::fill(slot, slot + w.taps, 0.0f);
    double total = 0;
    for (int x = xmin; x < xmax; ++x) total += triangle((x - center + 0.5) * inv);
    for (int x = xmin; x < xmax && x - first < w.taps; ++x) {
      const double weight = triangle((x - center + 0.5) * inv);
      slot[x - first] = static_cast<float>(total > 0 ? weight / total : 1.0 / (xmax - xmin));
    }
    w.start[i] = first;
    w.lo = std::min(w.lo, first);
    w.hi = std::max(w.hi, first + w.taps);
  }
}

Normalization Normalization::from(const ImageTransformOptions& opts) {
  Normalization n;
  for (int c = 0; c < 3; ++c) {
    n.scale[c] = 1.0f / (255.0f * opts.std[c]);
    n.bias[c] = -opts.mean[c] / opts.std[c];
  }
  return n;
}

void resample(const DecodedRegion& region, const AxisWeights& h, const AxisWeights& v, bool flip,
              const Normalization& norm, const ResampleTarget& target, float* row) {
  switch (target.dtype) {
    case DType::F32:
      dispatch_layout<float>(region, h, v, flip, target, row, [&norm](float x, int c) {
        return x * norm.scale[c] + norm.bias[c];
      });
      return;
    case DType::F16:
      dispatch_layout<uint16_t>(region, h, v, flip, target, row, [&norm](float x, int c) {
        return float_to_half(x * norm.scale[c] + norm.bias[c]);
      });
      return;
    default:  // U8: the resampled pixel, rounded (weights are non-negative: no clamp below)
      dispatch_layout<uint8_t>(region, h, v, flip, target, row, [](float x, int) {
        return static_cast<uint8_t>(std::min(x + 0.5f, 255.0f));
      });
      return;
  }
}

}  // namespace stoker
