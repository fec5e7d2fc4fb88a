// 64-bit mixing for the sampler's keys: splitmix64 (Steele, Lea, Flood 2014), whose
// finaliser is a bijection with full avalanche, so nearby seeds and epochs give
// unrelated keys.
#pragma once

#include <cstdint>

namespace stoker::distributed {

inline uint64_t fmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Advances `state` and returns the next value of the splitmix64 stream.
inline uint64_t splitmix64(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  return fmix64(state);
}

// A seed for a sub-stream (e.g. one run of samples) derived from a seed and a salt.
inline uint64_t derive_seed(uint64_t seed, uint64_t salt) {
  uint64_t s = fmix64(seed ^ 0x6a09e667f3bcc909ULL);
  return fmix64(s ^ fmix64(salt + 0x3c6ef372fe94f82bULL));
}

}  // namespace stoker::distributed
