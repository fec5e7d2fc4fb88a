// The reader stage of a streamed source (stoker/sources/shard_stream.hpp): one thread per
// loader reads this rank's shards in the order the sampler's stream order names
// (distributed/stream_order.hpp), each from start to end through the source's cursors,
// into a pool of sample buffers; the loader's workers take the samples from there by
// hand-out number instead of reading the source by index. Everything else of the loader
// (jobs, batches in sampler order, the ring, the arena, resume) is unchanged: the sampler
// in stream mode says which dataset index each hand-out is, and the feed supplies its bytes.
//
// The feed follows the loader's schedule: restart() (a new generation: another epoch, a
// restore, a broken loop) drops what it held and reads from the new start. It reads a
// following epoch only once the consumer has begun it (consumer_at): a shuffle buffer
// filled ahead across the epoch's end would read a dataset smaller than the buffer several
// times over (every epoch the buffer holds) before the current epoch's last batch, and the
// epochs a run never reaches would be read for nothing; so each shard is read once per
// epoch. The next epoch's first batch then waits for its buffer, as the first epoch's does.
// It holds at most `capacity` samples: the
// shuffle buffer plus the hand-outs of the batches that can be in flight, which is what
// the lowest unfinished batch may need (hand-out i needs at most buffer + i reads), so
// the workers never wait on a feed that waits on them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"
#include "stoker/sources/shard_stream.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

class StreamFeed {
 public:
  struct Stale {};  // thrown by take() for a job of a dropped schedule

  // `batch_size`, `drop_last`: the loader's, to know which hand-outs it takes (none of a
  // dropped last batch).
  StreamFeed(const ShardStreamSource& source, uint64_t capacity, uint64_t batch_size,
             bool drop_last);
  ~StreamFeed();
  StreamFeed(const StreamFeed&) = delete;
  StreamFeed& operator=(const StreamFeed&) = delete;

  void restart(uint64_t gen, const DistributedSampler& sampler);
  // The consumer began `epoch`'s loop: the reader may read it.
  void consumer_at(uint64_t epoch);
  // Hand-out `i` of `sampler`'s epoch: its bytes copied into `scratch`, and its label.
  // Waits until it is read. Throws Stale for another generation or after stop(), and
  // stoker::Error when its shard could not be read.
  RawSample take(uint64_t gen, const DistributedSampler& sampler, uint64_t i,
                 std::vector<std::byte>& scratch);
  void stop();  // wakes every waiter and joins the reader (call from another thread)
  ReadCounters counters() const;
  uint64_t capacity() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<std::byte> bytes;
    int64_t label = -1;
    std::optional<SampleError> cut;  // the rest of a cut shard: take() throws it
    uint32_t refs = 0;               // hand-outs still to take it
  };
  struct Epoch {
    uint64_t epoch = 0;
    std::vector<int32_t> entry;  // per read: -1 not read yet, else the entry holding it
    uint64_t left = 0;           // hand-outs not taken yet
  };
  struct Failure {
    uint64_t epoch = 0, read = 0;
    std::string where, what, todo;
  };

  void run();  // the reader thread
  void read_schedule(uint64_t gen, DistributedSampler s);
  bool read_epoch(uint64_t gen, const DistributedSampler& s, uint64_t& at_read);
  int acquire(uint64_t gen);  // a free entry; -1 when the generation ended
  // Hands a filled entry to the takers; false (and the entry back) when the generation ended.
  bool publish(uint64_t gen, uint64_t epoch, uint64_t read, int entry, int64_t label, uint8_t uses,
               const ReadCounters& cursor);
  void close_cursor(std::unique_ptr<ShardCursor>& cursor);
  Epoch* find(uint64_t epoch);  // mu_ held
  uint64_t used(uint64_t length) const;

  const ShardStreamSource& source_;
  const uint64_t batch_size_;
  const bool drop_last_;
  std::vector<Entry> entries_;

  mutable std::mutex mu_;
  std::condition_variable reader_cv_, taker_cv_;
  // Guarded by mu_.
  bool stop_ = false;
  uint64_t gen_ = 0;
  std::optional<DistributedSampler> pending_;  // the schedule restart() asked for
  uint64_t consumer_epoch_ = 0;                // the latest epoch the consumer began
  std::deque<Epoch> epochs_;
  std::vector<int> free_;
  int reading_ = -1;  // the entry the reader fills now
  int copying_ = 0;   // takes copying out of an entry now
  std::optional<Failure> failure_;
  ReadCounters done_counters_, cursor_counters_;

  std::thread thread_;
};

}  // namespace stoker
