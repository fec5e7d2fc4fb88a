// The streaming order: which samples rank r reads in an epoch, in which order it reads
// them, and in which order its shuffle buffer hands them out. A pure function of the shard
// sizes, (seed, epoch), the world, the buffer size and the phases the epoch already went
// through, so it is computed, never stored, and every rank computes every other rank's.
//
// The epoch's global stream is the shards in a (seed, epoch) permutation, each in file
// order. Of the R samples not consumed yet, rank r reads a contiguous slice: with
// drop_last, floor(R/W) each and the last R mod W samples are left out; else the first
// R mod W ranks read ceil(R/W), the others floor(R/W) plus one repeat (the padding), so
// every rank yields the same count (the sampler's equal-length rule). A slice covers whole
// shards but for the first and last, which it may share with its neighbours.
//
// A rank reads its slice in order through a buffer of S samples: when the buffer is full,
// a (seed, epoch, phase, rank)-keyed draw picks the sample to hand out and the next read
// takes its place; at the end the buffer drains in drawn order. Hand-out i thus needs at
// most S + i reads, which bounds how far the reader runs ahead.
//
// Resume: a phase is (world size, hand-outs per rank) of a run that stopped mid-epoch.
// Replaying each phase's buffers gives the set already handed out; the next phase splits
// what remains, so a resumed epoch still covers every sample exactly once, on any world.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/distributed/sampler_options.hpp"

namespace stoker {

class StreamOrder {
 public:
  struct Run {  // samples [first, first + count) of a shard, in file order
    uint32_t shard = 0;
    uint64_t first = 0, count = 0;
  };

  // Rank opts.rank of opts.world_size in `epoch` after `phases`. Throws stoker::Error for
  // phases that do not fit the dataset (a corrupt or edited resume state).
  static std::shared_ptr<const StreamOrder> make(const SamplerOptions& opts, uint64_t epoch,
                                                 std::vector<StreamPhase> phases);

  uint64_t length() const { return emit_.size(); }                    // hand-outs, padding included
  uint64_t index(uint64_t i) const { return read_index_[emit_[i]]; }  // dataset index
  uint64_t read_of(uint64_t i) const { return emit_[i]; }             // which read hand-out i takes
  uint64_t position(uint64_t i) const { return read_pos_[emit_[i]]; }  // in the global stream
  uint64_t order(uint64_t position) const;  // global stream -> dataset index
  uint64_t reads() const { return read_index_.size(); }
  uint32_t uses(uint64_t read) const { return read == pad_read_ ? 1 + pads_ : 1; }
  const std::vector<Run>& runs() const { return runs_; }  // what to read, in order
  const std::vector<StreamPhase>& phases() const { return phases_; }
  uint64_t remaining() const { return remaining_; }  // R: not consumed before this phase
  // Distinct samples of the epoch consumed when every rank has taken `local` hand-outs.
  uint64_t consumed_after(uint64_t local) const;

 private:
  StreamOrder() = default;
  void lay_out_shards(const SamplerOptions& opts, uint64_t epoch);
  void replay(const SamplerOptions& opts, uint64_t epoch, std::vector<bool>& done);
  void take_reads(std::vector<uint64_t> positions);

  std::vector<uint64_t> emit_, read_index_, read_pos_;
  std::vector<Run> runs_;
  std::vector<uint32_t> shard_order_;
  std::vector<uint64_t> starts_;       // global stream position of each shard_order_ entry
  std::vector<uint64_t> shard_first_;  // dataset index of each shard's first sample
  std::vector<StreamPhase> phases_;
  uint64_t remaining_ = 0, world_ = 1, pad_read_ = UINT64_MAX, pads_ = 0;
  bool drop_last_ = false;
};

}  // namespace stoker
