// The portable resample kernel: GCC/Clang vector extensions (SSE on x86-64, NEON on arm64),
// plus SSE2 for the uint8 -> float widening of the vertical pass where the baseline has it.
// Built with -ffp-contract=off, as the AVX2 kernel is: the two give the same bits.
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "transforms/resample_kernel.hpp"

namespace stoker {

namespace {

// row[0, n) = sum_k w[k] * src_k[0, n), rows src + k * stride: the vertical filter over the
// columns the horizontal filter needs. Per column: 0 + w[0]*x[0] + w[1]*x[1] + ..., the
// AVX2 kernel's order. On x86, SSE2 widens 16 bytes at a time (compilers scalarise a
// generic uint8 -> float vector conversion on baseline x86-64).
void combine_rows(const uint8_t* src, size_t stride, const float* w, int taps, int n, float* row) {
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

}  // namespace

void resample_portable(const DecodedRegion& r, const AxisWeights& h, const AxisWeights& v,
                       bool flip, const Normalization& norm, const ResampleTarget& t, float* row) {
  const int n = (h.hi - h.lo) * 3;
  row[n] = 0;  // read (and ignored) as the 4th lane of the last pixel
  const size_t plane = static_cast<size_t>(t.width) * t.height;
  with_kernel_types(
      t, h.taps, norm, [&]<int kTaps, class Out, bool kChw>(Out* out, const auto& sink) {
        for (int y = 0; y < t.height; ++y) {
          combine_rows(r.pixel(h.lo, v.start[y]), r.stride,
                       v.weights + static_cast<size_t>(y) * v.taps, v.taps, n, row);
          Out* dst = out + static_cast<size_t>(y) * t.width * (kChw ? 1 : 3);
          horizontal_portable<kTaps, Out, kChw>(row, h, flip, dst, 0, t.width, plane, sink);
        }
      });
}

}  // namespace stoker
