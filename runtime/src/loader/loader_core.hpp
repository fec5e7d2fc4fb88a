// The loader's shared state: the schedule of batch jobs, the prefetch ring, the slot pool
// and the statistics, behind one mutex taken at most once per batch on each side.
// Held by the Loader and by every live Batch (so a Batch may outlive the Loader).
//
// Jobs carry a global sequence number: the producers hand them out in order and chain
// from one epoch to the next by themselves; ring_[seq % slots] holds the slot of a
// finished job until the consumer takes it, so batches come out in sampler order
// whatever worker made them. A reset (another epoch, a restore, a broken loop) bumps the
// generation: stale jobs' slots go back to the pool instead of into the ring.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loader/batch_arena.hpp"
#include "loader/skip_log.hpp"
#include "loader/stream_feed.hpp"
#include "stoker/common/fork_check.hpp"
#include "stoker/distributed/sampler.hpp"
#include "stoker/loader/batch.hpp"
#include "stoker/loader/loader_options.hpp"
#include "stoker/loader/loader_stats.hpp"
#include "stoker/loader/prefetch_controller.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

class LoaderCore;
class MetricsWriter;
class RunRecorder;
class WorkerPool;

// A forked child's last reference must not destroy the core: its condition variables still
// count the parent's waiting workers, and destroying them would wait forever.
void leak_in_forked_child(std::shared_ptr<LoaderCore> core);

class LoaderCore : public std::enable_shared_from_this<LoaderCore> {
 public:
  // Everything checked and sized by the Loader's constructor.
  struct Setup {
    std::shared_ptr<const Source> source;
    std::shared_ptr<const Transform> transform;
    SampleSpec spec;
    LoaderOptions options;       // options.plan is set
    DistributedSampler sampler;  // epoch 0, agreed seed
    int workers = 1;
    int slots = 2;
    ControllerConfig controller;
  };
  explicit LoaderCore(Setup setup);

  // Worker side: the body of worker thread `w`; returns after stop().
  void work(int w);
  // Blocks until every worker has touched its slots and is ready.
  void wait_started();
  // Page-locks the arena (the CUDA seam) when the plan asks; call before open().
  // Returns notes for the stats when it cannot.
  std::vector<std::string> pin_arena();
  // Lets the workers start on epoch 0 (prefetch before the first loop).
  void open();
  void stop();

  // Consumer side (one consumer thread).
  // The consumer gave up on a wait (a signal ended it): ~Loader then abandons the samples
  // in flight instead of waiting for them.
  void interrupt() { interrupted_.store(true); }
  bool interrupted() const { return interrupted_.load(); }
  void set_epoch(uint64_t epoch);
  void start_epoch();
  // The sampler the next start_epoch() iterates (a pending restore, else next epoch's).
  DistributedSampler next_loop() const;
  // `recycle`: a batch of this loader to give back in the same critical section.
  std::optional<Batch> next(Batch* recycle = nullptr);
  // next() that waits at most `limit`: NotYet when the batch is not there by then (nothing
  // consumed: the next call asks for the same batch, and the wait it records runs from the
  // first ask, so the controller and the stats see one wait, not slices of it).
  enum class Delivery { Batch, End, NotYet };
  Delivery next_within(std::chrono::nanoseconds limit, std::optional<Batch>& out);
  bool next_ready();
  SamplerState state(uint64_t held_back) const;
  void restore(const SamplerState& state);
  uint64_t epoch() const;
  uint64_t batches_per_epoch() const { return batches_for(sampler_); }
  uint64_t length() const { return sampler_.length(); }
  int depth() const;
  LoaderStats stats(const std::vector<std::string>& extra_notes, uint64_t threads) const;

  // Any thread: a Batch gives its slot back.
  void release(int slot);

  const ForkCheck& made_in() const { return made_in_; }
  const Plan& plan() const { return *opt_.plan; }
  const SampleSpec& spec() const { return spec_; }
  const Source& source() const { return *source_; }
  size_t batch_size() const { return batch_size_; }
  const Transform& transform() const { return *transform_; }
  const BatchMix* mix() const { return opt_.mix.get(); }
  const DistributedSampler& sampler() const { return sampler_; }
  ReadCounters stream_reads() const { return feed_ ? feed_->counters() : ReadCounters{}; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Slot {                     // what a worker wrote besides the data, labels
    std::vector<uint64_t> indices;  // sized batch_size once
    std::vector<int64_t> labels;    // a mixed batch's labels before mixing (sized once)
    size_t count = 0;
    uint64_t epoch = 0, number = 0;
    StageTimes times;
    uint64_t produce_ns = 0, skipped = 0;
    uint64_t warned = 0;  // samples decoded with warnings (decode_warnings.hpp)
    bool failed = false;
    std::string fail_where, fail_what, fail_todo;  // only written on failure
  };
  struct Job {
    uint64_t seq = 0, gen = 0, epoch = 0, number = 0;
    int slot = -1;
    std::optional<DistributedSampler> sampler;
  };
  struct Stream {  // what the producers hand out next
    std::optional<DistributedSampler> sampler;
    uint64_t number = 0, batches = 0;
  };
  struct Loop {  // what the consumer iterates
    bool active = false, failed = false;
    std::optional<DistributedSampler> sampler;
    uint64_t epoch = 0, pos = 0, total = 0;
    bool first_pending = false;
    uint64_t attempted = 0, skipped = 0;  // samples of the delivered batches
  };

  // A consumer's request for the batch at `seq`: when it was first asked for and what the
  // ring held then (the controller's inputs), kept while a limited wait gives up.
  struct Ask {
    bool open = false;
    uint64_t seq = 0, gen = 0, asked_ns = 0;
    int ready = 0;
    bool filled = false;
  };
  uint64_t batches_for(const DistributedSampler& s) const;
  Delivery take(Batch* recycle, std::optional<Clock::time_point> deadline,
                std::optional<Batch>& out);
  uint64_t now_ns() const;
  bool can_take();                   // mu_ held
  Job take_job();                    // mu_ held
  void fill(const Job& job, int w);  // by worker w
  // MixUp/CutMix of a filled slot (opt_.mix), keyed by the batch; worker w's spare sample.
  void mix(const Job& job, Slot& m, int w);
  void reset_locked(const DistributedSampler& s);  // mu_ held
  bool complete_locked(const Job& job);            // mu_ held; true: wake the consumer
  // The error that ends the loop at this delivered batch: its failed sample, or under Skip
  // too large a share of skipped samples in the epoch so far. mu_ held.
  std::optional<Error> loop_failure_locked(const Slot& m);
  Batch make_batch(int slot);

  // Immutable after construction.
  std::shared_ptr<const Source> source_;
  std::shared_ptr<const Transform> transform_;
  SampleSpec spec_;
  size_t sample_bytes_ = 0, batch_size_ = 0;
  LoaderOptions opt_;
  SkipLog skips_;
  DistributedSampler sampler_;
  int workers_ = 1, slots_ = 2;
  BatchArena arena_;
  std::vector<Slot> meta_;
  std::vector<Scratch> scratch_;
  std::vector<std::byte> spares_;  // with opt_.mix: one sample per worker (mix_images)
  Clock::time_point t0_;
  std::unique_ptr<StreamFeed> feed_;  // a streamed source's reader stage, else null
  ForkCheck made_in_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  std::atomic<bool> stopping_{false};     // stop_, read by the workers between samples
  std::atomic<bool> interrupted_{false};  // interrupt(): a consumer gave up waiting
  // Guarded by mu_.
  Ask ask_;
  bool stop_ = false, open_ = false;
  int started_ = 0, busy_ = 0, depth_ = 1;
  uint64_t gen_ = 0, next_seq_ = 0, consume_seq_ = 0;
  bool ring_filled_ = false;
  std::vector<int> ring_, free_;
  // Cells of ring_ that hold a finished batch, consume_seq_..next_seq_: what a new ask finds
  // ready, counted as cells fill and empty (a scan at every next() cost O(depth)).
  int ready_ = 0;
  Stream stream_;
  Loop loop_;
  uint64_t next_epoch_ = 0;
  std::optional<DistributedSampler> pending_restore_;
  bool boundary_ = false;  // the job at consume_seq_ starts epoch boundary_epoch_
  uint64_t boundary_epoch_ = 0;
  PrefetchController controller_;
  LoaderStats totals_;  // counters and times only; lists are filled in stats()
  uint64_t first_request_ns_ = 0, last_delivery_ns_ = 0;
  bool requested_ = false;
  std::vector<EpochFirstBatch> first_batches_;
};

}  // namespace stoker
