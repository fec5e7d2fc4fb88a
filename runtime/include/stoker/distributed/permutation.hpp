// The keyed permutation an epoch's order is made of, for the sampler (sampler.hpp) and the
// streaming order's shard order (distributed/stream_order.hpp).
#pragma once

#include <cstdint>

namespace stoker {

// A keyed bijection on [0, size): a 4-round Feistel network over the smallest even-bit
// power-of-two domain >= size, with cycle walking back into range. O(1) memory; a few
// tens of ns per index. shuffle = false gives the identity.
class Permutation {
 public:
  static constexpr int kRounds = 4;
  Permutation() = default;  // the empty permutation (size 0)
  Permutation(uint64_t size, uint64_t seed, uint64_t epoch, bool shuffle = true);

  uint64_t size() const { return size_; }
  // position -> index; position < size() (not checked: this is the hot path).
  uint64_t operator()(uint64_t position) const;
  uint64_t inverse(uint64_t index) const;  // index -> position

 private:
  uint64_t encrypt(uint64_t x) const;
  uint64_t decrypt(uint64_t x) const;
  uint64_t size_ = 0;
  uint64_t half_mask_ = 0;
  unsigned half_bits_ = 0;
  bool shuffle_ = false;
  uint64_t keys_[kRounds] = {};
};

// The global permutation itself: position -> dataset index, bijective on [0, size).
// Throws stoker::Error when position >= size.
uint64_t permute_index(uint64_t position, uint64_t size, uint64_t seed, uint64_t epoch);

}  // namespace stoker
