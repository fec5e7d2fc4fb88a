// DistributedSampler: the shard rule of sampler.hpp on top of Permutation, plus the
// node-aware (block) order and resume.
#include <cstdint>
#include <string>

#include "distributed/stream_order.hpp"
#include "mix.hpp"
#include "sampler_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker {

namespace {
std::string str(uint64_t v) {
  return std::to_string(v);
}
using distributed::hex64;
const char* on_off(bool b) {
  return b ? "on" : "off";
}

// A mismatch between a resume state and this sampler.
[[noreturn]] void state_mismatch(const std::string& what) {
  throw Error("sampler state", what,
              "resume with the dataset and options the state was written with, or start the "
              "epoch afresh with set_epoch()");
}

// Where RASampler's epoch ends: floor(floor(size / 256) * 256 / world) samples per rank.
uint64_t ra_end(uint64_t size, uint64_t world) {
  return size / 256 * 256 / world * world;
}

void check_ra_reps(const SamplerOptions& o) {
  if (o.ra_reps == 0) {
    throw Error("sampler ra_reps", "is 0",
                "give 1 (no repetition) or more: the copies of each sample an epoch reads");
  }
  if (o.ra_reps == 1) return;
  const std::string reps = "ra_reps " + str(o.ra_reps);
  if (o.block != 0 || o.shards) {
    throw Error("sampler ra_reps",
                reps + " with " + (o.shards ? "streamed shards" : "block " + str(o.block)),
                "repeated augmentation reads samples by index: give ra_reps 1, or read the "
                "dataset by index without block mode");
  }
  if (o.ra_reps > UINT64_MAX / o.size) {
    throw Error("sampler ra_reps", reps + " x " + str(o.size) + " samples overflows",
                "give a few repetitions (torchvision's recipes use 3 or 4)");
  }
  // RASampler yields nothing here, silently: an epoch without a step is refused instead.
  if (ra_end(o.size, o.world_size) == 0) {
    throw Error("sampler ra_reps",
                reps + " over a dataset of " + str(o.size) + " samples on " + str(o.world_size) +
                    " rank(s) leaves each rank no sample: repeated " +
                    "augmentation (torchvision's RASampler) keeps floor(size / 256) * 256 / " +
                    "world size samples per rank, and RASampler would yield an empty epoch",
                "give ra_reps 1 for a dataset of fewer than 256 samples, or use at most as "
                "many ranks as the size rounded down to 256s");
  }
}
}  // namespace

DistributedSampler::DistributedSampler(const SamplerOptions& opts) : opts_(opts) {
  if (opts.world_size == 0) {
    throw Error("sampler world size", "is 0; a job has at least one rank",
                "set --world-size, WORLD_SIZE or SLURM_NTASKS to the number of ranks");
  }
  if (opts.rank >= opts.world_size) {
    throw Error("sampler rank",
                "rank " + str(opts.rank) + " is not below the world size " + str(opts.world_size),
                "ranks are numbered 0 to world size - 1");
  }
  if (opts.size == 0) {
    throw Error("sampler dataset size", "the dataset has 0 samples",
                "check the dataset path and that it holds samples");
  }
  if (opts.shards) {
    uint64_t sum = 0;
    for (uint64_t n : *opts.shards) sum += n;
    if (sum != opts.size || opts.block != 0) {
      throw Error("sampler options",
                  "streaming over shards of " + str(sum) + " samples in all, dataset size " +
                      str(opts.size) + ", block " + str(opts.block),
                  "the shard sizes must sum to the dataset size; block mode cannot stream");
    }
  }
  check_ra_reps(opts);
  set_epoch(0);
}

uint64_t DistributedSampler::end() const {
  return opts_.ra_reps > 1 ? ra_end(opts_.size, opts_.world_size) : opts_.size;
}

void DistributedSampler::restream(std::vector<StreamPhase> phases) {
  stream_ = StreamOrder::make(opts_, epoch_, std::move(phases));
  start_ = opts_.size - stream_->remaining();
  length_ = stream_->length();
}

void DistributedSampler::set_epoch(uint64_t epoch) {
  epoch_ = epoch;
  start_ = 0;
  group_ = opts_.block ? opts_.world_size : 0;
  if (opts_.shards) return restream({});
  recompute();
}

void DistributedSampler::recompute() {
  if (opts_.block == 0) {
    perm_ = Permutation(opts_.size, opts_.seed, epoch_, opts_.shuffle);
    tail_ = Permutation();
  } else {
    // Runs and the tail get their own keys, unrelated to the sample-level stream.
    const uint64_t full = opts_.size / opts_.block;
    perm_ = Permutation(full, distributed::derive_seed(opts_.seed, ~uint64_t{0}), epoch_,
                        opts_.shuffle);
    tail_ = Permutation(opts_.size % opts_.block, distributed::derive_seed(opts_.seed, full),
                        epoch_, opts_.shuffle);
  }
  // With repetition, a resume on a larger world may start past this world's end.
  const uint64_t remaining = end() > start_ ? end() - start_ : 0, w = opts_.world_size;
  const bool pad = !opts_.drop_last && opts_.ra_reps == 1;  // RASampler's epoch is cut
  length_ = remaining / w + (pad && remaining % w != 0 ? 1 : 0);
}

// Block mode lays the order out in rounds of `group_` full runs: position q of a round
// (of group_ x block positions) reads run slot q mod group_, sample q / group_ of it.
// Dealt round robin over group_ ranks, rank r thus reads run slot r of every round, whole.
// Full runs that do not fill a round, then the short tail run, follow run after run.
uint64_t DistributedSampler::order(uint64_t position) const {
  if (stream_) return stream_->order(position);
  if (opts_.block == 0) return perm_(position / opts_.ra_reps);
  const uint64_t k = opts_.block, full = opts_.size / k;
  const uint64_t rounds = full / group_, grouped = rounds * group_ * k;
  uint64_t slot, offset;
  if (position < grouped) {
    const uint64_t span = group_ * k, q = position % span;
    slot = (position / span) * group_ + q % group_;
    offset = q / group_;
  } else {
    const uint64_t q = position - grouped;
    slot = rounds * group_ + q / k;
    offset = q % k;
  }
  if (slot < full) {
    const uint64_t run = perm_(slot);
    return run * k +
           Permutation(k, distributed::derive_seed(opts_.seed, run), epoch_, opts_.shuffle)(offset);
  }
  return full * k + tail_(offset);
}

uint64_t DistributedSampler::position(uint64_t i) const {
  if (i >= length_) {
    throw Error("sampler", "index " + str(i) + " is beyond rank " + str(opts_.rank) + "'s length " +
                               str(length_) + " in epoch " + str(epoch_));
  }
  if (stream_) return stream_->position(i);
  const uint64_t remaining = end() - start_;  // > 0, as i < length_
  uint64_t k = i * opts_.world_size + opts_.rank;
  if (k >= remaining) k %= remaining;  // padding: wrap to the start of the remaining order
  return start_ + k;
}

uint64_t DistributedSampler::repetition(uint64_t i) const {
  return opts_.ra_reps > 1 ? position(i) % opts_.ra_reps : 0;
}

uint64_t DistributedSampler::at(uint64_t i) const {
  if (stream_ && i < length_) return stream_->index(i);
  return order(position(i));
}

SamplerState DistributedSampler::state(uint64_t local_consumed) const {
  if (local_consumed > length_) {
    throw Error("sampler state",
                "local position " + str(local_consumed) + " is beyond rank " + str(opts_.rank) +
                    "'s " + str(length_) + " samples of epoch " + str(epoch_),
                "pass how many of this epoch's indices the rank has consumed");
  }
  const uint64_t remaining = end() > start_ ? end() - start_ : 0;
  const uint64_t dealt = local_consumed * opts_.world_size;
  SamplerState s;
  s.seed = opts_.seed;
  s.epoch = epoch_;
  s.consumed = start_ + (dealt < remaining ? dealt : remaining);
  s.size = opts_.size;
  s.fingerprint = opts_.fingerprint;
  s.shuffle = opts_.shuffle;
  s.block = opts_.block;
  s.group = group_;
  s.ra_reps = opts_.ra_reps;
  if (stream_) {
    s.stream = true;
    s.buffer = opts_.shuffle_buffer;
    s.phases = stream_->phases();
    if (local_consumed > 0) s.phases.push_back({opts_.world_size, local_consumed});
    s.consumed = stream_->consumed_after(local_consumed);
  }
  return s;
}

void DistributedSampler::restore(const SamplerState& s) {
  if (s.version < SamplerState::kOldestReadableVersion ||
      s.version > SamplerState::kFormatVersion) {
    distributed::unreadable_version(s.version);
  }
  if (s.size != opts_.size) {
    state_mismatch("is from a dataset of " + str(s.size) + " samples; this dataset has " +
                   str(opts_.size));
  }
  // 0 on either side: no fingerprint could be made (a Python dataset of plain objects);
  // a v1 state's fingerprint was made by the older rule (names and sizes only).
  const bool comparable = s.version >= 2 && s.fingerprint != 0 && opts_.fingerprint != 0;
  if (comparable && s.fingerprint != opts_.fingerprint) {
    state_mismatch("is from a dataset with fingerprint " + hex64(s.fingerprint) +
                   "; this dataset's fingerprint is " + hex64(opts_.fingerprint) +
                   " (same size, but other names, sizes or content)");
  }
  if (s.seed != opts_.seed) {
    state_mismatch("was written with seed " + str(s.seed) + "; this sampler has seed " +
                   str(opts_.seed));
  }
  if (s.shuffle != opts_.shuffle) {
    state_mismatch(std::string("was written with shuffle ") + on_off(s.shuffle) +
                   "; this sampler has shuffle " + on_off(opts_.shuffle));
  }
  if (s.block != opts_.block) {
    state_mismatch("was written with block " + str(s.block) + "; this sampler has block " +
                   str(opts_.block));
  }
  if (s.ra_reps != opts_.ra_reps) {
    state_mismatch("was written with ra_reps " + str(s.ra_reps) + "; this sampler has ra_reps " +
                   str(opts_.ra_reps));
  }
  // The repeated order's positions (size x ra_reps fits: the constructor checked it).
  if (s.consumed > s.size * s.ra_reps) {
    throw Error("sampler state",
                "resume position " + str(s.consumed) + " is beyond the epoch of " +
                    str(s.size * s.ra_reps) +
                    (s.ra_reps > 1 ? " positions (" + str(s.size) + " samples x ra_reps " +
                                         str(s.ra_reps) + ")"
                                   : " samples"),
                "the state is corrupt or was edited; restart the epoch");
  }
  if ((s.block != 0) != (s.group != 0)) {
    throw Error("sampler state",
                "group " + str(s.group) + " does not fit block " + str(s.block) +
                    " (both are 0, or both are positive)",
                "the state is corrupt or was edited; restart the epoch");
  }
  check_stream(s);
  epoch_ = s.epoch;
  start_ = s.consumed;
  group_ = s.group;
  if (opts_.shards) return restream(s.phases);
  recompute();
}

void DistributedSampler::check_stream(const SamplerState& s) const {
  const bool streams = opts_.shards != nullptr;
  if (s.stream != streams) {
    state_mismatch(std::string("was written by a loader that ") +
                   (s.stream ? "streams its shards" : "reads samples by index") + "; this one " +
                   (streams ? "streams them" : "reads by index"));
  }
  if (streams && s.buffer != opts_.shuffle_buffer) {
    state_mismatch("was written with a shuffle buffer of " + str(s.buffer) +
                   " samples; this loader's holds " + str(opts_.shuffle_buffer));
  }
}

}  // namespace stoker
