// A counter-based random generator: the n-th draw of a stream is a pure function of
// (seed, epoch, sample index, repetition, stream, n). No state is shared between samples, so the
// augmentation of a sample never depends on which worker ran it, or in which order.
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/transforms/transform.hpp"

namespace stoker {

// splitmix64's finaliser: a bijective 64-bit mixer with full avalanche.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class CounterRng {
 public:
  // `stream` separates independent decisions (crop, flip, ...) of the same sample. The
  // repetition enters through mix64, which maps 0 to 0: copy 0's draws are those of a
  // sample without repetition (the golden tests hold them), the others' are apart.
  CounterRng(const SampleKey& key, uint64_t stream)
      : base_(mix64(mix64(mix64(key.seed ^ 0x5370c4e5a11ceULL) ^ key.epoch) ^ key.index) ^
              mix64(stream + 0x9e3779b97f4a7c15ULL) ^
              mix64(key.repetition * 0xd1b54a32d192ed03ULL)) {}

  uint64_t next() { return mix64(base_ + 0x9e3779b97f4a7c15ULL * ++counter_); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < 2^-64 * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  uint64_t base_;
  uint64_t counter_ = 0;
};

}  // namespace stoker
