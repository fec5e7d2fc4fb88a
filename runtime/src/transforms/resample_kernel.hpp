// What the resample kernels (resample_portable.cpp, resample_avx2.cpp) share: the
// per-pixel filter, the output conversions, the portable horizontal pass (the AVX2 kernel
// runs it for a row's last width % 8 pixels) and the dispatch on dtype, layout and taps.
//
// Everything here has internal linkage on purpose: the two kernel files are built with
// different instruction sets, and an inline function with external linkage compiled in both
// would be merged by the linker into one copy, perhaps the AVX2 one, on a CPU without AVX2.
#pragma once

#include <cstring>

#include "transforms/decoded_region.hpp"
#include "transforms/half.hpp"
#include "transforms/resample_args.hpp"

namespace stoker {

// The entry points of the two kernels. resample_avx2 returns false where this build has no
// AVX2 kernel (not x86-64, or a compiler without -mavx2).
void resample_portable(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v,
                       bool flip, const Normalization& norm, const ResampleTarget& t, float* row);
bool resample_avx2(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, bool flip,
                   const Normalization& norm, const ResampleTarget& t, float* work);
bool resample_avx2_compiled();
// The floats of `work` past the row the AVX2 kernel needs.
size_t resample_avx2_work_floats(const AxisWeights& h, const AxisWeights& v, int width);
// The vertically filtered row: (h.hi - h.lo) * 3 floats, one more read as a 4th lane,
// rounded up to a multiple of 8 floats.
inline size_t resample_row_floats(const AxisWeights& h) {
  return (static_cast<size_t>(h.hi - h.lo) * 3 + 1 + 7) & ~size_t{7};
}

namespace {

// Four floats in one SSE/NEON register (GCC/Clang vector extension): one multiply-add per
// tap handles a whole RGB pixel (the fourth lane is ignored).
typedef float V4 __attribute__((vector_size(16)));

inline V4 load4(const float* p) {
  V4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, V4 v) {
  std::memcpy(p, &v, sizeof v);
}

// One output pixel (RGB in lanes 0..2): `taps` weighted input pixels, in two independent
// chains (shorter add latency): even taps from w[0] * p[0], odd taps from 0. The AVX2
// kernel keeps exactly this order, so both kernels round alike.
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

// Filtered values clamped to 0..255, as PIL clamps its 8-bit output: bicubic's negative
// lobes overshoot at edges (bilinear's weights never do, beyond float rounding).
inline V4 clamp255(V4 v) {
  v = v > 0.0f ? v : V4{0, 0, 0, 0};
  return v < 255.0f ? v : V4{255.0f, 255.0f, 255.0f, 255.0f};
}

// How filtered values become output elements: `map` works on one channel of four pixels at
// once (clamp, then normalisation or rounding for uint8), `cast` stores one element.
struct ToF32 {
  const Normalization& n;
  V4 map(V4 v, int c) const { return clamp255(v) * n.scale[c] + n.bias[c]; }
  static float cast(float v) { return v; }
};
struct ToF16 {
  const Normalization& n;
  V4 map(V4 v, int c) const { return clamp255(v) * n.scale[c] + n.bias[c]; }
  static uint16_t cast(float v) { return float_to_half(v); }
};
struct ToU8 {
  V4 map(V4 v, int) const { return clamp255(v + 0.5f); }
  static uint8_t cast(float v) { return static_cast<uint8_t>(v); }
};

// Output pixels [x0, width) of one row: each combines `taps` pixels of the vertically
// filtered `row` (RGB at once, the flip folded into the index); four pixels are then
// transposed to one register per channel, mapped together and stored, so that CHW float
// stores are whole vectors. `dst` is the row's first element (channel 0 for CHW).
template <int kTaps, class Out, bool kChw, class Sink>
void horizontal_portable(const float* row, const AxisWeights& h, bool flip, Out* dst, int x0,
                         int width, size_t plane, const Sink& sink) {
  auto pixel = [&](int x) {
    const int sx = flip ? width - 1 - x : x;
    return filter_pixel<kTaps>(h.weights + static_cast<size_t>(sx) * h.taps,
                               row + (h.start[sx] - h.lo) * 3, h.taps);
  };
  auto put = [&](int x, const V4(&ch)[3], int lanes) {
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
  int x = x0;
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

// Calls body.template operator()<kTaps, Out, kChw>(out, sink) for the target's dtype and
// layout and the horizontal tap count (constants for the counts RandomResizedCrop and the
// eval resize produce, so the tap loops unroll; 0 means "h.taps at run time").
template <int kTaps, class Body>
void with_layout(const ResampleTarget& t, const Normalization& norm, Body& body) {
  auto go = [&]<class Out, class Sink>(const Sink& sink) {
    if (t.layout == Layout::CHW) {
      body.template operator()<kTaps, Out, true>(static_cast<Out*>(t.out), sink);
    } else {
      body.template operator()<kTaps, Out, false>(static_cast<Out*>(t.out), sink);
    }
  };
  switch (t.dtype) {
    case DType::F32:
      return go.template operator()<float>(ToF32{norm});
    case DType::F16:
      return go.template operator()<uint16_t>(ToF16{norm});
    default:
      return go.template operator()<uint8_t>(ToU8{});
  }
}

template <class Body>
void with_kernel_types(const ResampleTarget& t, int taps, const Normalization& norm, Body body) {
  switch (taps) {
    case 2:
      return with_layout<2>(t, norm, body);
    case 3:
      return with_layout<3>(t, norm, body);
    case 4:
      return with_layout<4>(t, norm, body);
    case 5:
      return with_layout<5>(t, norm, body);
    default:
      return with_layout<0>(t, norm, body);
  }
}

}  // namespace

}  // namespace stoker
