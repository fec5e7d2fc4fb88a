#include "transforms/resample.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

inline V4 load4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, V4 v) { std::memcpy(p, &v, sizeof v); }

// row[0, n) = sum_k w[k] * src_k[0, n), rows src + k * stride: the vertical filter over the
// columns the horizontal filter needs. On x86, SSE2 widens 16 bytes at a time (compilers
// scalarise a generic uint8 -> float vector conversion on baseline x86-64).
void combine_rows(const uint8_t* src, size_t stride, const float* w, int taps, int n,
                  float* row) {
  int i = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < taps; ++k) {
      const __m128 wk = _mm_set1_ps(w[k]);
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k * stride + i));
      const __m128i lo = _mm_unpacklo_epi8(b, zero), hi = _mm_unpackhi_epi8(b, zero);
      a0 = _mm_add_ps(a0, _mm_mul_ps(wk, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero))));
      a1 = _mm_add_ps(a1, _mm_mul_ps(wk, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero))));
      a2 = _mm_add_ps(a2, _mm_mul_ps(wk, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero))));
      a3 = _mm_add_ps(a3, _mm_mul_ps(wk, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero))));
    }
    _mm_storeu_ps(row + i, a0);
    _mm_storeu_ps(row + i + 4, a1);
    _mm_storeu_ps(row + i + 8, a2);
    _mm_storeu_ps(row + i + 12, a3);
  }
#endif
  for (; i < n; ++i) {
    float acc = 0;
    for (int k = 0; k < taps; ++k) acc += w[k] * static_cast<float>(src[k * stride + i]);
    row[i] = acc;
  }
}

// One output pixel (RGB in lanes 0..2): `taps` weighted input pixels. With the tap count
// a constant the loop unrolls into two independent chains (shorter add latency).
template <int kTaps>
inline V4 filter_pixel(const float* hw, const float* p, int taps) {
  const int n = kTaps > 0 ? kTaps : taps;
  V4 even = hw[0] * load4(p), odd = {0, 0, 0, 0};
  for (int k = 1; k + 1 < n; k += 2) {
    odd += hw[k] * load4(p + 3 * k);
    even += hw[k + 1] * load4(p + 3 * k + 3);
  }
  if (n % 2 == 0) odd += hw[n - 1] * load4(p + 3 * (n - 1));
  return even + odd;
}

// How values on 0..255 become output elements: `map` works on one channel of four
// pixels at once (normalisation, or rounding for uint8), `cast` stores one element.
struct ToF32 {
  const Normalization& n;
  V4 map(V4 v, int c) const { return v * n.scale[c] + n.bias[c]; }
  static float cast(float v) { return v; }
};
struct ToF16 {
  const Normalization& n;
  V4 map(V4 v, int c) const { return v * n.scale[c] + n.bias[c]; }
  static uint16_t cast(float v) { return float_to_half(v); }
};
struct ToU8 {  // weights are non-negative: no clamp below 0
  V4 map(V4 v, int) const {
    v += 0.5f;
    return v < 255.0f ? v : V4{255.0f, 255.0f, 255.0f, 255.0f};
  }
  static uint8_t cast(float v) { return static_cast<uint8_t>(v); }
};

// The fused pass. Each output row combines its input rows vertically, then each output
// pixel combines `taps` pixels of that row horizontally (RGB at once); four output pixels
// are then transposed to one register per channel, mapped together and stored, so that
// CHW float stores are whole vectors.
template <int kTaps, class Out, bool kChw, class Sink>
void resample_into(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, bool flip,
                   Out* out, int width, int height, float* row, const Sink& sink) {
  const int n = (h.hi - h.lo) * 3;
  row[n] = 0;  // read (and ignored) as the 4th lane of the last pixel
  const size_t plane = static_cast<size_t>(width) * height;
  for (int y = 0; y < height; ++y) {
    combine_rows(r.pixel(h.lo, v.start[y]), r.stride, v.weights + static_cast<size_t>(y) * v.taps,
                 v.taps, n, row);
    Out* dst = out + static_cast<size_t>(y) * width * (kChw ? 1 : 3);
    auto pixel = [&](int x) {
      const int sx = flip ? width - 1 - x : x;
      return filter_pixel<kTaps>(h.weights + static_cast<size_t>(sx) * h.taps,
                                 row + (h.start[sx] - h.lo) * 3, h.taps);
    };
    auto put = [&](int x, const V4 (&ch)[3], int lanes) {
      for (int c = 0; c < 3; ++c) {
        for (int j = 0; j < lanes; ++j) {
          if constexpr (kChw) {
            dst[c * plane + x + j] = Sink::cast(ch[c][j]);
          } else {
            dst[3 * (x + j) + c] = Sink::cast(ch[c][j]);
          }
        }
      }
    };
    int x = 0;
    for (; x + 4 <= width; x += 4) {
      const V4 p0 = pixel(x), p1 = pixel(x + 1), p2 = pixel(x + 2), p3 = pixel(x + 3);
      const V4 ch[3] = {sink.map(V4{p0[0], p1[0], p2[0], p3[0]}, 0),
                        sink.map(V4{p0[1], p1[1], p2[1], p3[1]}, 1),
                        sink.map(V4{p0[2], p1[2], p2[2], p3[2]}, 2)};
      if constexpr (kChw && sizeof(Out) == 4) {
        for (int c = 0; c < 3; ++c) store4(reinterpret_cast<float*>(dst + c * plane + x), ch[c]);
      } else {
        put(x, ch, 4);
      }
    }
    for (; x < width; ++x) {
      const V4 p = pixel(x);
      const V4 ch[3] = {sink.map(V4{p[0], 0, 0, 0}, 0), sink.map(V4{p[1], 0, 0, 0}, 1),
                        sink.map(V4{p[2], 0, 0, 0}, 2)};
      put(x, ch, 1);
    }
  }
}

template <class Out, bool kChw, class Sink>
void dispatch_taps(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, bool flip,
                   Out* out, int width, int height, float* row, const Sink& sink) {
  switch (h.taps) {  // the counts RandomResizedCrop and eval resizes produce
    case 2: return resample_into<2, Out, kChw>(r, h, v, flip, out, width, height, row, sink);
    case 3: return resample_into<3, Out, kChw>(r, h, v, flip, out, width, height, row, sink);
    case 4: return resample_into<4, Out, kChw>(r, h, v, flip, out, width, height, row, sink);
    case 5: return resample_into<5, Out, kChw>(r, h, v, flip, out, width, height, row, sink);
    default: return resample_into<0, Out, kChw>(r, h, v, flip, out, width, height, row, sink);
  }
}

template <class Out, class Sink>
void dispatch_layout(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v,
                     bool flip, const ResampleTarget& t, float* row, const Sink& sink) {
  auto* out = static_cast<Out*>(t.out);
  if (t.layout == Layout::CHW) {
    dispatch_taps<Out, true>(r, h, v, flip, out, t.width, t.height, row, sink);
  } else {
    dispatch_taps<Out, false>(r, h, v, flip, out, t.width, t.height, row, sink);
  }
}

}  // namespace

namespace {

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

}  // namespace

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
    case DType::F32: return dispatch_layout<float>(region, h, v, flip, target, row, ToF32{norm});
    case DType::F16: return dispatch_layout<uint16_t>(region, h, v, flip, target, row, ToF16{norm});
    default: return dispatch_layout<uint8_t>(region, h, v, flip, target, row, ToU8{});
  }
}

}  // namespace stoker
