// A source that can be read as streams, shard by shard, from start to end in large
// sequential reads: what network and spinning storage need (a random open/pread per sample
// is the seek storm they cannot serve). The loader streams such a source when streamed()
// is true: a reader thread per rank reads this rank's shards in the epoch's order into a
// shuffle buffer, and the workers take the samples from memory (docs/user-guide.md,
// "Streaming shards").
//
// Header only: the interface; tar_source.cpp implements it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/sources/source.hpp"

namespace stoker {

// What a stream asked of the file system.
struct ReadCounters {
  uint64_t reads = 0;    // read() calls on shard files
  uint64_t bytes = 0;    // bytes they returned (compressed bytes for .gz/.zst)
  uint64_t largest = 0;  // the largest single read
  ReadCounters& operator+=(const ReadCounters& o) {
    reads += o.reads;
    bytes += o.bytes;
    largest = largest > o.largest ? largest : o.largest;
    return *this;
  }
};

// One shard open for streaming: its samples in file order.
class ShardCursor {
 public:
  virtual ~ShardCursor() = default;
  // The shard's next sample: its bytes into `*bytes` (resized to fit; its capacity is kept)
  // or skipped when `bytes` is null, and its label. False after the shard's last sample.
  // Throws stoker::Error naming the shard and member for a corrupt or truncated shard.
  virtual bool next(std::vector<std::byte>* bytes, int64_t& label) = 0;
  virtual ReadCounters counters() const = 0;
};

class ShardStreamSource : public Source {
 public:
  // True when the loader should stream the source rather than read samples by index.
  virtual bool streamed() const = 0;
  // Samples per shard, in the source's order. Dataset index i of sample m of shard s is
  // the samples of shards 0..s-1 plus m.
  virtual const std::vector<uint64_t>& shard_samples() const = 0;
  virtual std::unique_ptr<ShardCursor> open_shard(uint32_t shard) const = 0;
  virtual const std::string& shard_name(uint32_t shard) const = 0;
};

}  // namespace stoker
