// Pillow's bilinear affine sampling (augment_geometry.cpp's, which Rotate, ShearX and ShearY
// run with the recipes' bilinear interpolation) four output pixels at a time in AVX2's
// doubles. Each lane does the double operations of Pillow's bilinear_filter32RGB in the same
// order, so the bytes are the same; the branches of the one-pixel sampler (a fraction of 0,
// the last row) are taken by clipping instead, which gives the same values: a difference
// times 0 adds 0, and a clipped row equals the row it repeats. Built with -mavx2 and
// -ffp-contract=off (a fused multiply-add would round differently from Pillow's).
#include "transforms/augment_geometry.hpp"

#if defined(__AVX2__)
#include <immintrin.h>

#include <climits>
#include <cstring>
#endif

namespace stoker {

#if defined(__AVX2__)

namespace {

// Four pixels' bytes at the byte offsets `off` into the image, each as R | G << 8 | B << 16.
// A 32-bit load at the last pixel would pass the image's end: those lanes load from one byte
// earlier (`last` is the image's size less 4) and shift the extra byte out. Four scalar loads,
// not AVX2's gather, which is slower on AMD's cores (measured on this project's EPYC).
inline __m128i load_rgb(const uint8_t* in, __m128i off, __m128i last) {
  const __m128i at = _mm_min_epi32(off, last);
  alignas(16) int o[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(o), at);
  int b[4];
  for (int i = 0; i < 4; ++i) std::memcpy(&b[i], in + o[i], 4);
  const __m128i v = _mm_setr_epi32(b[0], b[1], b[2], b[3]);
  return _mm_srlv_epi32(v, _mm_slli_epi32(_mm_sub_epi32(off, at), 3));
}

template <int C>
inline __m256d channel(__m128i rgb) {
  return _mm256_cvtepi32_pd(_mm_and_si128(_mm_srli_epi32(rgb, 8 * C), _mm_set1_epi32(255)));
}

// Pillow's BILINEAR(v, a, b, d): a + (b - a) * d.
inline __m256d lerp(__m256d a, __m256d b, __m256d d) {
  return _mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(b, a), d));
}

// The four pixels' two rows (p00 p01 above p10 p11) and fractions. A fraction that is 0 in
// every lane needs no second column (dx) or row (dy): its difference times 0 adds 0 whatever
// the bytes, so that lerp is left out and its loads too. The shears sample whole columns
// (ShearY) or rows (ShearX), and skip half the work.
struct Quad {
  __m128i p00, p01, p10, p11;
  __m256d dx, dy;
  bool dx_zero, dy_zero;
};

// One channel of the four pixels, truncated to an integer as Pillow's cast to UINT8 does.
template <int C>
inline __m128i sample(const Quad& q) {
  auto row = [&](__m128i left, __m128i right) {
    return q.dx_zero ? channel<C>(left) : lerp(channel<C>(left), channel<C>(right), q.dx);
  };
  const __m256d top = row(q.p00, q.p01);
  const __m256d v = q.dy_zero ? top : lerp(top, row(q.p10, q.p11), q.dy);
  return _mm_slli_epi32(_mm256_cvttpd_epi32(v), 8 * C);
}

inline __m128i clip(__m128i v, __m128i hi) {
  return _mm_min_epi32(_mm_max_epi32(v, _mm_setzero_si128()), hi);
}

}  // namespace

bool bilinear_affine_avx2(const uint8_t* in, int w, int h, uint8_t* out, const AffineMatrix& a) {
  const long long bytes = 3LL * w * h;
  if (bytes < 4 || bytes > INT_MAX) return false;  // 32-bit offsets, a 4-byte load
  const __m256d a0 = _mm256_set1_pd(a[0]), a2 = _mm256_set1_pd(a[2]);
  const __m256d a3 = _mm256_set1_pd(a[3]), a5 = _mm256_set1_pd(a[5]);
  const __m256d half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
  const __m256d wd = _mm256_set1_pd(w), hd = _mm256_set1_pd(h);
  const __m128i wi = _mm_set1_epi32(w), one = _mm_set1_epi32(1), three = _mm_set1_epi32(3);
  const __m128i x_hi = _mm_set1_epi32(w - 1), y_hi = _mm_set1_epi32(h - 1);
  const __m128i last = _mm_set1_epi32(static_cast<int>(bytes - 4));
  for (int y = 0; y < h; ++y) {
    const double yin = y + 0.5;
    const __m256d a1y = _mm256_set1_pd(a[1] * yin), a4y = _mm256_set1_pd(a[4] * yin);
    uint8_t* row = out + static_cast<size_t>(y) * w * 3;
    for (int x = 0; x < w; x += 4) {
      const __m256d xin = _mm256_add_pd(_mm256_set_pd(x + 3, x + 2, x + 1, x), half);
      __m256d sx = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a0, xin), a1y), a2);
      __m256d sy = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a3, xin), a4y), a5);
      const __m256d inside = _mm256_and_pd(
          _mm256_and_pd(_mm256_cmp_pd(sx, zero, _CMP_GE_OQ), _mm256_cmp_pd(sx, wd, _CMP_LT_OQ)),
          _mm256_and_pd(_mm256_cmp_pd(sy, zero, _CMP_GE_OQ), _mm256_cmp_pd(sy, hd, _CMP_LT_OQ)));
      // Lanes past the row's end, and sampling points outside the image, keep the fill.
      const int lanes = w - x < 4 ? (1 << (w - x)) - 1 : 15;
      const int mask = _mm256_movemask_pd(inside) & lanes;
      if (mask == 0) continue;
      // Outside lanes sample (0, 0), whatever their coordinates were (a huge one would make
      // INT_MIN): their loads stay inside the image, and their bytes are not written.
      sx = _mm256_blendv_pd(zero, _mm256_sub_pd(sx, half), inside);
      sy = _mm256_blendv_pd(zero, _mm256_sub_pd(sy, half), inside);
      const __m256d fx = _mm256_floor_pd(sx), fy = _mm256_floor_pd(sy);
      const __m256d dx = _mm256_sub_pd(sx, fx), dy = _mm256_sub_pd(sy, fy);
      const __m128i ix = _mm256_cvttpd_epi32(fx), iy = _mm256_cvttpd_epi32(fy);
      const __m128i x0 = clip(ix, x_hi), x1 = clip(_mm_add_epi32(ix, one), x_hi);
      const __m128i r0 = _mm_mullo_epi32(clip(iy, y_hi), wi);
      const __m128i r1 = _mm_mullo_epi32(clip(_mm_add_epi32(iy, one), y_hi), wi);
      auto at = [&](__m128i r, __m128i c) {
        return load_rgb(in, _mm_mullo_epi32(_mm_add_epi32(r, c), three), last);
      };
      Quad q{};
      q.dx = dx;
      q.dy = dy;
      q.dx_zero = _mm256_movemask_pd(_mm256_cmp_pd(dx, zero, _CMP_EQ_OQ)) == 15;
      q.dy_zero = _mm256_movemask_pd(_mm256_cmp_pd(dy, zero, _CMP_EQ_OQ)) == 15;
      q.p00 = at(r0, x0);
      if (!q.dx_zero) q.p01 = at(r0, x1);
      if (!q.dy_zero) q.p10 = at(r1, x0);
      if (!q.dx_zero && !q.dy_zero) q.p11 = at(r1, x1);
      const __m128i rgb = _mm_or_si128(_mm_or_si128(sample<0>(q), sample<1>(q)), sample<2>(q));
      if (mask == 15) {  // all four inside: their 12 bytes in two stores
        const __m128i packed = _mm_shuffle_epi8(
            rgb, _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(row + 3 * x), packed);
        const int last4 = _mm_extract_epi32(packed, 2);
        std::memcpy(row + 3 * x + 8, &last4, 4);
        continue;
      }
      alignas(16) uint32_t px[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(px), rgb);
      for (int i = 0; i < 4; ++i) {
        if (mask & (1 << i)) std::memcpy(row + 3 * (x + i), &px[i], 3);  // little-endian
      }
    }
  }
  return true;
}

#else

bool bilinear_affine_avx2(const uint8_t*, int, int, uint8_t*, const AffineMatrix&) {
  return false;
}

#endif

}  // namespace stoker
