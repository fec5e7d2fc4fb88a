// The distributed sampler: an epoch's global order is a pure function of
// (seed, epoch, dataset size), computed by a keyed bijective permutation with O(1)
// memory; rank r takes an equal-length shard. See the README's "Shuffle and resume".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker {

struct SamplerOptions {
  uint64_t size = 0;         // samples in the dataset
  uint64_t seed = 0;
  uint64_t world_size = 1;
  uint64_t rank = 0;
  bool shuffle = true;
  bool drop_last = false;    // false: pad the tail by wrapping (DistributedSampler's default)
  uint64_t fingerprint = 0;  // dataset fingerprint (names and sizes), checked on restore
};

// Resume state: small and serialisable. `consumed` counts samples of the epoch's
// global order consumed by all ranks together.
struct SamplerState {
  static constexpr uint32_t kFormatVersion = 1;
  uint32_t version = kFormatVersion;
  uint64_t seed = 0, epoch = 0, consumed = 0, size = 0, fingerprint = 0;
  std::string to_string() const;                    // one line, stable text
  static SamplerState parse(std::string_view text);  // throws stoker::Error
};

class DistributedSampler {
 public:
  // Throws stoker::Error on world size 0, rank >= world size, size 0.
  explicit DistributedSampler(const SamplerOptions& opts);

  void set_epoch(uint64_t epoch);  // starts the epoch from its beginning
  uint64_t epoch() const { return epoch_; }
  const SamplerOptions& options() const { return opts_; }

  // Number of indices this rank yields in the current epoch (from the resume point);
  // the same on every rank.
  uint64_t length() const { return length_; }
  // The i-th dataset index of this rank's shard, i < length(). O(1) time and memory.
  uint64_t at(uint64_t i) const;

  // State after this rank (and, in lockstep, every rank) consumed `local_consumed`
  // of its length() indices.
  SamplerState state(uint64_t local_consumed) const;
  // Continues the state's epoch, possibly on another world size, with no sample of
  // that epoch repeated or lost. Throws stoker::Error for another dataset, seed or format.
  void restore(const SamplerState& state);

 private:
  SamplerOptions opts_;
  uint64_t epoch_ = 0;
  uint64_t start_ = 0;   // global position the current epoch resumes from
  uint64_t length_ = 0;
  uint64_t key_[4] = {};  // permutation keys for (seed, epoch)
  void recompute();
};

// The global permutation itself: position -> dataset index, bijective on [0, size).
uint64_t permute_index(uint64_t position, uint64_t size, uint64_t seed, uint64_t epoch);

}  // namespace stoker
