// The AVX2 resample kernel (x86-64, chosen at run time where the CPU has AVX2 and F16C).
// Built with -mavx2 -mf16c -ffp-contract=off (runtime/CMakeLists.txt): nothing here may run
// before resample_kernel_available() has checked the CPU.
//
// Same arithmetic as the portable kernel, wider: the vertical pass widens 8 bytes to 8
// floats per operation; the horizontal pass filters two output pixels per 256-bit register
// (pixel x in the low half, x + 4 in the high half), with the portable kernel's two add
// chains, so every float is rounded as the portable kernel rounds it. Four registers
// (x .. x+7) then transpose to one register per channel for CHW, or store pixel by pixel
// for HWC.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transforms/resample_kernel.hpp"

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>

namespace stoker {

namespace {

// The helpers below are called per pixel pair and per 8 columns: GCC would otherwise
// leave some of them as calls.
#define STOKER_INLINE inline __attribute__((always_inline))

STOKER_INLINE __m256 widen8(const uint8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
}

// row[0, n) = 0 + w[0]*x_0 + w[1]*x_1 + ... per column (the portable combine_rows' order),
// where load8(k, i) reads input row k's columns i .. i+7 as floats and load1(k, i) one.
template <class Load8, class Load1>
STOKER_INLINE void combine(const float* w, int taps, int n, float* row, Load8 load8, Load1 load1) {
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < taps; ++k) {
      const __m256 wk = _mm256_set1_ps(w[k]);
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(wk, load8(k, i)));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(wk, load8(k, i + 8)));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(wk, load8(k, i + 16)));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(wk, load8(k, i + 24)));
    }
    _mm256_storeu_ps(row + i, a0);
    _mm256_storeu_ps(row + i + 8, a1);
    _mm256_storeu_ps(row + i + 16, a2);
    _mm256_storeu_ps(row + i + 24, a3);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 a = _mm256_setzero_ps();
    for (int k = 0; k < taps; ++k)
      a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_set1_ps(w[k]), load8(k, i)));
    _mm256_storeu_ps(row + i, a);
  }
  for (; i < n; ++i) {
    float acc = 0;
    for (int k = 0; k < taps; ++k) acc += w[k] * load1(k, i);
    row[i] = acc;
  }
}

// The vertical pass. Each input row feeds about v.taps output rows, so up to kRingTaps taps
// the rows are widened to floats once each into a ring of v.taps rows (input row j in slot
// j % taps; v.start never decreases); past that (a rare, steep downscale) the ring would
// outgrow the cache and the bytes are widened tap by tap instead.
class VerticalPass {
 public:
  static constexpr int kRingTaps = 16;
  static size_t ring_floats(const AxisWeights& h, const AxisWeights& v) {
    return v.taps <= kRingTaps ? static_cast<size_t>(v.taps) * pitch(h) : 0;
  }

  VerticalPass(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, float* ring)
      : r_(r), h_(h), v_(v), n_((h.hi - h.lo) * 3), ring_(ring), widened_to_(v.start[0]) {}

  void row(int y, float* out) {
    const float* w = v_.weights + static_cast<size_t>(y) * v_.taps;
    const int first = v_.start[y], taps = v_.taps;
    if (taps > kRingTaps) {
      const uint8_t* src = r_.pixel(h_.lo, first);
      const size_t stride = r_.stride;
      combine(
          w, taps, n_, out, [&](int k, int i) { return widen8(src + k * stride + i); },
          [&](int k, int i) { return static_cast<float>(src[k * stride + i]); });
      return;
    }
    for (int j = std::max(first, widened_to_); j < first + taps; ++j) widen(j);
    widened_to_ = first + taps;
    const float* rows[kRingTaps];
    for (int k = 0; k < taps; ++k) rows[k] = slot(first + k);
    combine(
        w, taps, n_, out, [&](int k, int i) { return _mm256_loadu_ps(rows[k] + i); },
        [&](int k, int i) { return rows[k][i]; });
  }

 private:
  static size_t pitch(const AxisWeights& h) {
    return (static_cast<size_t>(h.hi - h.lo) * 3 + 7) & ~size_t{7};
  }
  float* slot(int j) { return ring_ + static_cast<size_t>(j % v_.taps) * pitch(h_); }
  void widen(int j) {
    const uint8_t* src = r_.pixel(h_.lo, j);
    float* dst = slot(j);
    int i = 0;
    for (; i + 8 <= n_; i += 8) _mm256_storeu_ps(dst + i, widen8(src + i));
    for (; i < n_; ++i) dst[i] = static_cast<float>(src[i]);
  }

  const DecodedRegion& r_;
  const AxisWeights &h_, &v_;
  const int n_;
  float* ring_;
  int widened_to_;  // input rows below this are widened (those still in the window)
};

STOKER_INLINE __m256 halves(__m128 lo, __m128 hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

// Output pixels a (low half) and b (high half): filter_pixel's chains, two pixels at once.
// `w` holds the pair's weights tap by tap, 8 floats each (spread_pair_weights).
template <int kTaps>
STOKER_INLINE __m256 filter_pair(const float* w, const float* pa, const float* pb, int taps) {
  const int n = kTaps > 0 ? kTaps : taps;
  auto px = [&](int k) __attribute__((always_inline)) {
    return halves(_mm_loadu_ps(pa + 3 * k), _mm_loadu_ps(pb + 3 * k));
  };
  auto wt = [&](int k) __attribute__((always_inline)) {
    return _mm256_loadu_ps(w + 8 * k);
  };
  __m256 even = _mm256_mul_ps(wt(0), px(0)), odd = _mm256_setzero_ps();
  for (int k = 1; k + 1 < n; k += 2) {
    odd = _mm256_add_ps(odd, _mm256_mul_ps(wt(k), px(k)));
    even = _mm256_add_ps(even, _mm256_mul_ps(wt(k + 1), px(k + 1)));
  }
  if (n % 2 == 0) odd = _mm256_add_ps(odd, _mm256_mul_ps(wt(n - 1), px(n - 1)));
  return _mm256_add_ps(even, odd);
}

// The input pixel each output pixel starts from, the flip folded in.
STOKER_INLINE int source_of(int x, bool flip, int width) {
  return flip ? width - 1 - x : x;
}

// The horizontal weights of every output pair (x+j, x+j+4) of each group of 8, tap by tap,
// as 8 floats: the weights of x+j in the low half, of x+j+4 in the high half. A tap's
// weights are then one load, not two broadcasts and an insert. Built once per image:
// width * taps * 4 floats (groups of 8 only; a row's last width % 8 pixels go portable).
size_t pair_weight_floats(const AxisWeights& h, int width) {
  return static_cast<size_t>(width / 8) * 8 * h.taps * 4;
}
void spread_pair_weights(const AxisWeights& h, bool flip, int width, float* out) {
  for (int x = 0; x + 8 <= width; x += 8) {
    for (int j = 0; j < 4; ++j) {
      const float* wa = h.weights + static_cast<size_t>(source_of(x + j, flip, width)) * h.taps;
      const float* wb = h.weights + static_cast<size_t>(source_of(x + j + 4, flip, width)) * h.taps;
      for (int k = 0; k < h.taps; ++k, out += 8) {
        for (int l = 0; l < 4; ++l) {
          out[l] = wa[k];
          out[4 + l] = wb[k];
        }
      }
    }
  }
}

// A sink's map (resample_kernel.hpp) in registers, on 8 values of one channel or on two
// RGB pixels. Made once per image: the stores through the output could alias the
// Normalization, so a map read from it would be reloaded for every group of pixels.
inline __m256 clamp255(__m256 v) {  // as the portable kernel's clamp255
  return _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
}

template <class Sink>
struct Avx2Map {  // float outputs: clamp255(v) * scale + bias
  __m256 scale[3], bias[3], scale_px, bias_px;
  explicit Avx2Map(const Sink& s) {
    const auto& sc = s.n.scale;
    const auto& b = s.n.bias;
    for (int c = 0; c < 3; ++c) {
      scale[c] = _mm256_set1_ps(sc[c]);
      bias[c] = _mm256_set1_ps(b[c]);
    }
    scale_px = _mm256_setr_ps(sc[0], sc[1], sc[2], 0, sc[0], sc[1], sc[2], 0);
    bias_px = _mm256_setr_ps(b[0], b[1], b[2], 0, b[0], b[1], b[2], 0);
  }
  __m256 channel(__m256 v, int c) const {
    return _mm256_add_ps(_mm256_mul_ps(clamp255(v), scale[c]), bias[c]);
  }
  __m256 pixels(__m256 v) const {
    return _mm256_add_ps(_mm256_mul_ps(clamp255(v), scale_px), bias_px);
  }
};
template <>
struct Avx2Map<ToU8> {  // uint8: + 0.5, clamped to 0..255 (then truncated)
  __m256 half = _mm256_set1_ps(0.5f);
  explicit Avx2Map(const ToU8&) {}
  __m256 channel(__m256 v, int) const { return pixels(v); }
  __m256 pixels(__m256 v) const { return clamp255(_mm256_add_ps(v, half)); }
};

inline __m128i to_u8x8(__m256 v) {  // 8 values on 0..255 -> 8 bytes (low half)
  const __m256i i = _mm256_cvttps_epi32(v);
  const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  return _mm_packus_epi16(w, w);
}

// p[j] holds pixels x+j and x+j+4. CHW: transposed to R, G, B registers of x .. x+7.
template <class Out, class Map>
STOKER_INLINE void store_chw(const __m256 (&p)[4], const Map& map, Out* dst, size_t plane) {
  const __m256 t0 = _mm256_unpacklo_ps(p[0], p[1]);  // r0 r1 g0 g1 | r4 r5 g4 g5
  const __m256 t1 = _mm256_unpacklo_ps(p[2], p[3]);  // r2 r3 g2 g3 | r6 r7 g6 g7
  const __m256 t2 = _mm256_unpackhi_ps(p[0], p[1]);  // b0 b1 .. .. | b4 b5 .. ..
  const __m256 t3 = _mm256_unpackhi_ps(p[2], p[3]);
  const __m256 ch[3] = {_mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0)),
                        _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2)),
                        _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0))};
  for (int c = 0; c < 3; ++c) {
    const __m256 v = map.channel(ch[c], c);
    Out* at = dst + c * plane;
    if constexpr (sizeof(Out) == 4) {
      _mm256_storeu_ps(reinterpret_cast<float*>(at), v);
    } else if constexpr (sizeof(Out) == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(at),
                       _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(at), to_u8x8(v));
    }
  }
}

// HWC: each pixel's 4 lanes are stored at its place in ascending order, so the 4th lane
// (not a channel) is overwritten by the next pixel; the row's last pixel stores 3 elements,
// so nothing is written past the row. `last` says this group ends the row.
template <class Out, class Map>
STOKER_INLINE void store_hwc(const __m256 (&p)[4], const Map& map, Out* dst, bool last) {
  if constexpr (sizeof(Out) == 1) {
    __m256i i[4];
    for (int j = 0; j < 4; ++j) i[j] = _mm256_cvttps_epi32(map.pixels(p[j]));
    // pixels x .. x+3 as 4 bytes each in the low half, x+4 .. x+7 in the high half
    const __m256i b =
        _mm256_packus_epi16(_mm256_packus_epi32(i[0], i[1]), _mm256_packus_epi32(i[2], i[3]));
    const __m256i rgb = _mm256_shuffle_epi8(
        b, _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5,
                            6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(rgb));
    const __m128i hi = _mm256_extracti128_si256(rgb, 1);
    std::memcpy(dst + 12, &hi, 12);
    return;
  }
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 4; ++j) {
      const __m256 v = map.pixels(p[j]);
      Out* at = dst + 3 * (4 * half + j);
      const bool exact = last && half == 1 && j == 3;
      if constexpr (sizeof(Out) == 4) {
        const __m128 q = half ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v);
        if (exact) {
          std::memcpy(at, &q, 12);
        } else {
          _mm_storeu_ps(reinterpret_cast<float*>(at), q);
        }
      } else {
        __m128i q = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (half) q = _mm_unpackhi_epi64(q, q);
        if (exact) {
          std::memcpy(at, &q, 6);
        } else {
          _mm_storel_epi64(reinterpret_cast<__m128i*>(at), q);
        }
      }
    }
  }
}

template <int kTaps, class Out, bool kChw, class Sink>
void horizontal_avx2(const float* row, const AxisWeights& h, const float* pair_weights, bool flip,
                     Out* dst, int width, size_t plane, const Sink& sink) {
  const int taps = h.taps;
  const float* pw = pair_weights;
  auto pair = [&](int a, int b) __attribute__((always_inline)) {
    const __m256 p =
        filter_pair<kTaps>(pw, row + (h.start[source_of(a, flip, width)] - h.lo) * 3,
                           row + (h.start[source_of(b, flip, width)] - h.lo) * 3, taps);
    pw += static_cast<size_t>(taps) * 8;
    return p;
  };
  const Avx2Map<Sink> map(sink);
  int x = 0;
  for (; x + 8 <= width; x += 8) {
    const __m256 p0 = pair(x, x + 4), p1 = pair(x + 1, x + 5), p2 = pair(x + 2, x + 6);
    const __m256 p[4] = {p0, p1, p2, pair(x + 3, x + 7)};
    if constexpr (kChw) {
      store_chw(p, map, dst + x, plane);
    } else {
      store_hwc(p, map, dst + 3 * x, x + 8 == width);
    }
  }
  horizontal_portable<kTaps, Out, kChw>(row, h, flip, dst, x, width, plane, sink);
}

}  // namespace

bool resample_avx2_compiled() {
  return true;
}

size_t resample_avx2_work_floats(const AxisWeights& h, const AxisWeights& v, int width) {
  return pair_weight_floats(h, width) + VerticalPass::ring_floats(h, v);
}

bool resample_avx2(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v, bool flip,
                   const Normalization& norm, const ResampleTarget& t, float* work) {
  const int n = (h.hi - h.lo) * 3;
  float* row = work;
  row[n] = 0;  // read (and ignored) as the 4th lane of the last pixel
  float* pair_weights = work + resample_row_floats(h);
  spread_pair_weights(h, flip, t.width, pair_weights);
  VerticalPass vertical(r, h, v, pair_weights + pair_weight_floats(h, t.width));
  const size_t plane = static_cast<size_t>(t.width) * t.height;
  with_kernel_types(
      t, h.taps, norm, [&]<int kTaps, class Out, bool kChw>(Out* out, const auto& sink) {
        for (int y = 0; y < t.height; ++y) {
          vertical.row(y, row);
          Out* dst = out + static_cast<size_t>(y) * t.width * (kChw ? 1 : 3);
          horizontal_avx2<kTaps, Out, kChw>(row, h, pair_weights, flip, dst, t.width, plane, sink);
        }
      });
  return true;
}

}  // namespace stoker

#else  // no AVX2 kernel in this build: resample() runs the portable one

namespace stoker {
bool resample_avx2_compiled() {
  return false;
}
size_t resample_avx2_work_floats(const AxisWeights&, const AxisWeights&, int) {
  return 0;
}
bool resample_avx2(const DecodedRegion&, const AxisWeights&, const AxisWeights&, bool,
                   const Normalization&, const ResampleTarget&, float*) {
  return false;
}
}  // namespace stoker

#endif
