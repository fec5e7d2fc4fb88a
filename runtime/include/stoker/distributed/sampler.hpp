// The distributed sampler: an epoch's global order is a pure function of
// (seed, epoch, dataset size), computed by a keyed bijective permutation with O(1)
// memory; rank r takes an equal-length shard. See the README's "Shuffle and resume".
//
// Shard rule: the epoch resumes at global position `start` (0 unless restored); the
// remaining R = size - start positions are dealt round robin, rank r taking
// start + r, start + r + W, start + r + 2W, ... Every rank yields the same length:
//   drop_last = false: ceil(R / W); the positions k >= R of the dealt range wrap to
//                      start + (k mod R), i.e. the beginning of the remaining order
//                      (exactly torch's DistributedSampler padding when start = 0);
//   drop_last = true:  floor(R / W); the last R mod W positions are not visited.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class StreamOrder;

// Streaming: one run that stopped mid-epoch, as (world size, hand-outs per rank).
struct StreamPhase {
  uint64_t world = 1, consumed = 0;
  bool operator==(const StreamPhase&) const = default;
};

struct SamplerOptions {
  uint64_t size = 0;  // samples in the dataset
  uint64_t seed = 0;
  uint64_t world_size = 1;
  uint64_t rank = 0;
  bool shuffle = true;
  bool drop_last = false;    // false: pad the tail by wrapping (DistributedSampler's default)
  uint64_t fingerprint = 0;  // dataset fingerprint (Source::fingerprint), checked on restore
  // Node-aware (block) mode when > 0: the dataset is cut into contiguous runs of `block`
  // samples (a file, a shard); runs are shuffled among themselves and samples within each
  // run, and each rank reads whole runs, so a run is read by one rank (one node) per epoch.
  uint64_t block = 0;
  // Streaming mode when set: the samples per shard (they sum to `size`), read as streams.
  // Each rank reads a contiguous slice of the epoch's shuffled shard order through a
  // shuffle buffer of `shuffle_buffer` samples (distributed/stream_order.hpp).
  std::shared_ptr<const std::vector<uint64_t>> shards;
  uint64_t shuffle_buffer = 0;
};

// Resume state: small and serialisable. `consumed` counts distinct positions of the
// epoch's global order consumed by all ranks together (local x W, capped at `size`:
// padding repeats are not counted, so consumed == size means the epoch is done).
struct SamplerState {
  // v2: the fingerprint reads a sample of the data's content as well as its names and
  // sizes. A v1 state (names and sizes only) is still read, so a run saved before the
  // change resumes; its fingerprint, made by the older rule, is not compared.
  static constexpr uint32_t kFormatVersion = 2;
  static constexpr uint32_t kOldestReadableVersion = 1;
  uint32_t version = kFormatVersion;
  uint64_t seed = 0, epoch = 0, consumed = 0, size = 0, fingerprint = 0;
  bool shuffle = true;
  uint64_t block = 0;  // SamplerOptions::block
  uint64_t group = 0;  // block mode: runs per round the epoch's order was laid out for
  // Streaming mode: the shuffle buffer and the phases of the epoch so far, oldest first.
  bool stream = false;
  uint64_t buffer = 0;
  std::vector<StreamPhase> phases;
  // "stoker-sampler v2 seed=S epoch=E consumed=C size=N fingerprint=0xF shuffle=1 block=B group=G"
  // and for streams " buffer=S phases=W:C,W:C" ("phases=-" for none).
  std::string to_string() const;
  static SamplerState parse(std::string_view text);  // throws stoker::Error
};

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

class DistributedSampler {
 public:
  // Throws stoker::Error on world size 0, rank >= world size, size 0.
  explicit DistributedSampler(const SamplerOptions& opts);

  void set_epoch(uint64_t epoch);  // starts the epoch from its beginning
  uint64_t epoch() const { return epoch_; }
  const SamplerOptions& options() const { return opts_; }
  uint64_t start() const { return start_; }  // global position the epoch (re)starts from

  // Number of indices this rank yields in the current epoch (from the resume point);
  // the same on every rank.
  uint64_t length() const { return length_; }
  // The i-th dataset index of this rank's shard, i < length(). O(1) time and memory.
  // Throws stoker::Error for i >= length().
  uint64_t at(uint64_t i) const;
  // The position in the epoch's global order that at(i) reads (same bounds as at()).
  uint64_t position(uint64_t i) const;
  // Streaming mode: this rank's reads and hand-outs in the current epoch; else null.
  const StreamOrder* stream_order() const { return stream_.get(); }
  // The epoch's global order: position (< size) -> dataset index. Identical on every rank.
  uint64_t order(uint64_t position) const;

  // State after this rank (and, in lockstep, every rank) consumed `local_consumed`
  // of its length() indices. Throws stoker::Error when local_consumed > length().
  SamplerState state(uint64_t local_consumed) const;
  // Continues the state's epoch, possibly on another world size, with no sample of
  // that epoch repeated or lost. Throws stoker::Error for another dataset, seed, order
  // or format, or a resume position beyond the epoch. Do not call set_epoch() after it
  // for the same epoch: that restarts the epoch.
  void restore(const SamplerState& state);

 private:
  void recompute();
  void restream(std::vector<StreamPhase> phases);
  void check_stream(const SamplerState& state) const;
  SamplerOptions opts_;
  uint64_t epoch_ = 0;
  uint64_t start_ = 0;  // global position the current epoch resumes from
  uint64_t length_ = 0;
  uint64_t group_ = 0;  // block mode: runs per round (the world size the epoch began with)
  Permutation perm_;    // of samples, or (block mode) of the full runs
  Permutation tail_;    // block mode: within the last, short run
  std::shared_ptr<const StreamOrder> stream_;  // streaming mode (shared by copies)
};

// The global permutation itself: position -> dataset index, bijective on [0, size).
// Throws stoker::Error when position >= size.
uint64_t permute_index(uint64_t position, uint64_t size, uint64_t seed, uint64_t epoch);

}  // namespace stoker
