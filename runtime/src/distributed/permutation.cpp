// Permutation: a keyed Feistel network with cycle walking (Black & Rogaway, "Ciphers
// with arbitrary finite domains", 2002). The domain is 2^(2h) >= size with h minimal,
// so it is < 4 x size and a walk takes fewer than 4 steps on average.
#include <bit>

#include "mix.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/permutation.hpp"

namespace stoker {

namespace {
inline uint64_t round_function(uint64_t half, uint64_t key, uint64_t mask) {
  return distributed::fmix64(half ^ key) & mask;
}
}  // namespace

Permutation::Permutation(uint64_t size, uint64_t seed, uint64_t epoch, bool shuffle)
    : size_(size), shuffle_(shuffle) {
  // Bits needed for [0, size), rounded up to an even count (at least 2: halves of 1 bit).
  unsigned bits = size <= 1 ? 0 : 64 - static_cast<unsigned>(std::countl_zero(size - 1));
  bits = bits < 2 ? 2 : bits + (bits & 1);
  half_bits_ = bits / 2;
  half_mask_ = half_bits_ == 32 ? 0xffffffffULL : (uint64_t{1} << half_bits_) - 1;
  uint64_t state = distributed::derive_seed(seed, epoch);
  for (auto& k : keys_) k = distributed::splitmix64(state);
}

uint64_t Permutation::encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int i = 0; i < kRounds; ++i) {
    const uint64_t next = left ^ round_function(right, keys_[i], half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t Permutation::decrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (int i = kRounds - 1; i >= 0; --i) {
    const uint64_t prev = right ^ round_function(left, keys_[i], half_mask_);
    right = left;
    left = prev;
  }
  return (left << half_bits_) | right;
}

// Cycle walking: x's cycle in the domain permutation returns to x < size, so the walk
// ends, and it maps [0, size) onto itself bijectively.
uint64_t Permutation::operator()(uint64_t position) const {
  if (!shuffle_) return position;
  uint64_t x = position;
  do x = encrypt(x);
  while (x >= size_);
  return x;
}

uint64_t Permutation::inverse(uint64_t index) const {
  if (!shuffle_) return index;
  uint64_t x = index;
  do x = decrypt(x);
  while (x >= size_);
  return x;
}

uint64_t permute_index(uint64_t position, uint64_t size, uint64_t seed, uint64_t epoch) {
  if (position >= size) {
    throw Error("permute_index",
                "position " + std::to_string(position) + " is outside the dataset of " +
                    std::to_string(size) + " samples",
                "positions run from 0 to size - 1");
  }
  return Permutation(size, seed, epoch)(position);
}

}  // namespace stoker
