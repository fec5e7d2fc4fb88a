// The distributed sampler: an epoch's global order is a pure function of
// (seed, epoch, dataset size), computed by a keyed bijective permutation with O(1)
// memory; rank r takes an equal-length shard. See docs/user-guide.md, "Shuffle and resume".
//
// Shard rule: the epoch resumes at global position `start` (0 unless restored); the
// remaining R = size - start positions are dealt round robin, rank r taking
// start + r, start + r + W, start + r + 2W, ... Every rank yields the same length:
//   drop_last = false: ceil(R / W); the positions k >= R of the dealt range wrap to
//                      start + (k mod R), i.e. the beginning of the remaining order
//                      (exactly torch's DistributedSampler padding when start = 0);
//   drop_last = true:  floor(R / W); the last R mod W positions are not visited.
//
// Repeated augmentation (ra_reps = N > 1), as torchvision's RASampler: the epoch's order
// has size x N positions, position p reading order position p / N (so each index comes N
// times in a row, repetition p mod N), and the epoch ends at E = floor(floor(size / 256) *
// 256 / W) x W, below size x N: every rank yields floor((E - start) / W) (RASampler's
// floor(size // 256 * 256 / W) from start 0), never padding, whatever drop_last says. A
// dataset too small for one sample per rank (size < 256, or W above size rounded down to
// 256s) is an error, not RASampler's empty epoch. A resume on another world size deals the
// rest up to that world's E, floor((E - start) / W) each: no position repeats.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/distributed/permutation.hpp"
#include "stoker/distributed/sampler_options.hpp"

namespace stoker {

class StreamOrder;

// Resume state: small and serialisable. `consumed` counts distinct positions of the
// epoch's global order consumed by all ranks together (local x W, capped at `size`:
// padding repeats are not counted, so consumed == size means the epoch is done; with
// ra_reps > 1, positions of the repeated order, capped at its end E).
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
  uint64_t ra_reps = 1;  // SamplerOptions::ra_reps; a state without the key reads as 1
  // "stoker-sampler v2 seed=S epoch=E consumed=C size=N fingerprint=0xF shuffle=1 block=B group=G"
  // and for streams " buffer=S phases=W:C,W:C" ("phases=-" for none), and " ra_reps=N"
  // when N > 1 (so a state without repetition reads in a stoker from before the key).
  std::string to_string() const;
  static SamplerState parse(std::string_view text);  // throws stoker::Error
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
  // Which of its ra_reps copies at(i) is (0 .. ra_reps - 1; 0 without repetition), for
  // the sample's augmentation key (same bounds as at()).
  uint64_t repetition(uint64_t i) const;
  // Streaming mode: this rank's reads and hand-outs in the current epoch; else null.
  const StreamOrder* stream_order() const { return stream_.get(); }
  // The epoch's global order: position (< size x ra_reps) -> dataset index. Identical on
  // every rank.
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
  uint64_t end() const;  // where the epoch's dealt positions end: size, or E with ra_reps
  SamplerOptions opts_;
  uint64_t epoch_ = 0;
  uint64_t start_ = 0;  // global position the current epoch resumes from
  uint64_t length_ = 0;
  uint64_t group_ = 0;  // block mode: runs per round (the world size the epoch began with)
  Permutation perm_;    // of samples, or (block mode) of the full runs
  Permutation tail_;    // block mode: within the last, short run
  std::shared_ptr<const StreamOrder> stream_;  // streaming mode (shared by copies)
};

}  // namespace stoker
