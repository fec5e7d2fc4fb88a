// IEEE binary16 conversions (round to nearest even), portable and branch-light.
#pragma once

#include <bit>
#include <cstdint>

namespace stoker {

inline uint16_t float_to_half(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  f &= 0x7fffffffu;
  if (f >= 0x47800000u) {  // >= 65536, Inf or NaN: all exponent bits set
    return static_cast<uint16_t>(sign | (f > 0x7f800000u ? 0x7e00u : 0x7c00u));
  }
  if (f < 0x38800000u) {  // below 2^-14: a subnormal half or zero
    // Adding 0.5 aligns the value so the float hardware rounds it at the half's precision.
    const float aligned = std::bit_cast<float>(f) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(aligned) - 0x3f000000u));
  }
  const uint32_t odd = (f >> 13) & 1u;  // ties go to the even mantissa
  f += 0xc8000fffu + odd;               // rebias the exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (f >> 13));
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * 0x1.0p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace stoker
