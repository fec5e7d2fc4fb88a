#include "distributed/stream_order.hpp"

#include <algorithm>
#include <string>

#include "mix.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/permutation.hpp"

namespace stoker {

namespace {

constexpr uint64_t kShardSalt = 0x5f0a2c3e9b1d7a41ULL;   // the shard permutation's key
constexpr uint64_t kBufferSalt = 0x2b7e151628aed2a6ULL;  // the shuffle buffers' draws

struct Slice {
  uint64_t first = 0, count = 0;  // in the order of the remaining samples
  uint64_t length = 0;            // hand-outs of every rank (the equal-length rule)
};

Slice slice_of(uint64_t remaining, uint64_t world, uint64_t rank, bool drop_last) {
  const uint64_t q = remaining / world, m = remaining % world;
  if (drop_last) return {rank * q, q, q};
  return {rank * q + std::min(rank, m), q + (rank < m ? 1 : 0), q + (m != 0 ? 1 : 0)};
}

// The positions of the global stream not in `done` (empty: none done), in order.
class Remaining {
 public:
  Remaining(const std::vector<bool>& done, uint64_t size) : done_(done), size_(size) {}
  void take(uint64_t n, std::vector<uint64_t>* out) {
    if (out != nullptr) out->clear();
    for (; n > 0 && next_ < size_; ++next_) {
      if (!done_.empty() && done_[next_]) continue;
      if (out != nullptr) out->push_back(next_);
      --n;
    }
  }

 private:
  const std::vector<bool>& done_;
  uint64_t size_, next_ = 0;
};

// The order in which a buffer of `buffer` samples hands out the first `handouts` of `n`
// reads (read numbers), drawn with `key`.
void buffer_order(uint64_t n, uint64_t handouts, uint64_t buffer, bool shuffle, uint64_t key,
                  std::vector<uint64_t>& out) {
  out.clear();
  handouts = std::min(handouts, n);
  if (!shuffle || buffer <= 1) {
    for (uint64_t i = 0; i < handouts; ++i) out.push_back(i);
    return;
  }
  std::vector<uint64_t> held;
  held.reserve(std::min(buffer, n));
  uint64_t next = 0;
  while (held.size() < buffer && next < n) held.push_back(next++);
  for (uint64_t i = 0; i < handouts; ++i) {
    const auto k = static_cast<size_t>(
        (static_cast<unsigned __int128>(distributed::splitmix64(key)) * held.size()) >> 64);
    out.push_back(held[k]);
    if (next < n) {
      held[k] = next++;
    } else {
      held[k] = held.back();
      held.pop_back();
    }
  }
}

uint64_t draw_key(const SamplerOptions& opts, uint64_t epoch, uint64_t phase, uint64_t rank) {
  const uint64_t epoch_key = distributed::derive_seed(opts.seed ^ kBufferSalt, epoch);
  return distributed::derive_seed(epoch_key, (phase << 32) ^ rank);
}

[[noreturn]] void bad_phase(size_t j, const StreamPhase& p, const std::string& why) {
  throw Error("sampler state",
              "stream phase " + std::to_string(j) + " (" + std::to_string(p.world) + ":" +
                  std::to_string(p.consumed) + ") " + why,
              "the state is corrupt or was edited; restart the epoch");
}

}  // namespace

void StreamOrder::lay_out_shards(const SamplerOptions& opts, uint64_t epoch) {
  const std::vector<uint64_t>& sizes = *opts.shards;
  const auto count = static_cast<uint32_t>(sizes.size());
  const Permutation perm(count, distributed::derive_seed(opts.seed, kShardSalt), epoch,
                         opts.shuffle);
  shard_order_.resize(count);
  starts_.assign(count + 1, 0);
  shard_first_.assign(count + 1, 0);
  for (uint32_t s = 0; s < count; ++s) shard_first_[s + 1] = shard_first_[s] + sizes[s];
  for (uint32_t k = 0; k < count; ++k) {
    shard_order_[k] = static_cast<uint32_t>(perm(k));
    starts_[k + 1] = starts_[k] + sizes[shard_order_[k]];
  }
}

// Marks what every rank of every phase handed out, leaving remaining_ for the next.
void StreamOrder::replay(const SamplerOptions& opts, uint64_t epoch, std::vector<bool>& done) {
  std::vector<uint64_t> positions, handed;
  for (size_t j = 0; j < phases_.size(); ++j) {
    const StreamPhase& p = phases_[j];
    if (p.world == 0) bad_phase(j, p, "has world size 0");
    Remaining walk(done, done.size());  // slices are consecutive: marks land behind the walk
    uint64_t consumed = 0;
    for (uint64_t r = 0; r < p.world; ++r) {
      const Slice s = slice_of(remaining_, p.world, r, opts.drop_last);
      if (p.consumed > s.length) {
        bad_phase(j, p,
                  "hands out more than the " + std::to_string(s.length) +
                      " samples per rank that phase had");
      }
      walk.take(s.count, &positions);
      buffer_order(s.count, p.consumed, opts.shuffle_buffer, opts.shuffle,
                   draw_key(opts, epoch, j, r), handed);
      for (uint64_t h : handed) done[positions[h]] = true;
      consumed += handed.size();
    }
    remaining_ -= consumed;
  }
}

void StreamOrder::take_reads(std::vector<uint64_t> positions) {
  read_pos_ = std::move(positions);
  read_index_.resize(read_pos_.size());
  size_t k = 0;
  for (size_t i = 0; i < read_pos_.size(); ++i) {
    const uint64_t p = read_pos_[i];
    while (starts_[k + 1] <= p) ++k;  // positions increase: the shard index only moves on
    const uint32_t shard = shard_order_[k];
    const uint64_t member = p - starts_[k];
    read_index_[i] = shard_first_[shard] + member;
    if (!runs_.empty() && runs_.back().shard == shard &&
        runs_.back().first + runs_.back().count == member) {
      ++runs_.back().count;
    } else {
      runs_.push_back({shard, member, 1});
    }
  }
}

std::shared_ptr<const StreamOrder> StreamOrder::make(const SamplerOptions& opts, uint64_t epoch,
                                                     std::vector<StreamPhase> phases) {
  std::shared_ptr<StreamOrder> o(new StreamOrder());
  o->lay_out_shards(opts, epoch);
  const uint64_t size = o->starts_.back();
  o->phases_ = std::move(phases);
  o->world_ = opts.world_size;
  o->drop_last_ = opts.drop_last;
  o->remaining_ = size;
  std::vector<bool> done;
  if (!o->phases_.empty()) {
    done.assign(size, false);
    o->replay(opts, epoch, done);
  }
  const Slice mine = slice_of(o->remaining_, opts.world_size, opts.rank, opts.drop_last);
  Remaining walk(done, size);
  std::vector<uint64_t> positions;
  walk.take(mine.first, nullptr);
  walk.take(mine.count, &positions);
  if (mine.count == 0 && mine.length > 0) {  // fewer samples than ranks: repeat the first
    Remaining again(done, size);
    again.take(1, &positions);
  }
  o->take_reads(std::move(positions));
  buffer_order(mine.count, mine.count, opts.shuffle_buffer, opts.shuffle,
               draw_key(opts, epoch, o->phases_.size(), opts.rank), o->emit_);
  if (mine.length > o->emit_.size()) {  // padding: the last read is handed out again
    o->pad_read_ = o->emit_.empty() ? 0 : o->emit_.back();
    o->pads_ = mine.length - mine.count - (mine.count == 0 ? 1 : 0);
    o->emit_.resize(mine.length, o->pad_read_);
  }
  return o;
}

uint64_t StreamOrder::order(uint64_t position) const {
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), position);
  const auto k = static_cast<size_t>(it - starts_.begin() - 1);
  return shard_first_[shard_order_[k]] + position - starts_[k];
}

uint64_t StreamOrder::consumed_after(uint64_t local) const {
  uint64_t n = starts_.back() - remaining_;
  for (uint64_t r = 0; r < world_; ++r) {
    n += std::min(local, slice_of(remaining_, world_, r, drop_last_).count);
  }
  return n;
}

}  // namespace stoker
