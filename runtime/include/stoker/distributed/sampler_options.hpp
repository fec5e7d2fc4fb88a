// What a distributed sampler is built from (sampler.hpp): the dataset's size and
// fingerprint, the seed, this rank's place, the order's options, and for streams the
// shards and the phases of a resumed epoch. Apart from sampler.hpp because the streaming
// order (distributed/stream_order.hpp), which the sampler includes, is built from them too.
//
// Header only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace stoker {

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
  // Repeated augmentation when > 1 (torchvision's RASampler, references/classification):
  // each position of the epoch's order is repeated ra_reps times in a row and the epoch is
  // cut to floor(floor(size / 256) * 256 / world_size) samples per rank (sampler.hpp).
  // Not with block or streaming mode.
  uint64_t ra_reps = 1;
};

}  // namespace stoker
