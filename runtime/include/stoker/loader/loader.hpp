// The loader: persistent pinned worker threads read, transform and collate samples
// straight into recycled batch slots; a prefetch ring hands the batches to the consumer
// in sampler order. See the README's "Loader" section.
//
//   auto loader = stoker::Loader::for_this_process(source, transform, opts);
//   for (uint64_t e = 0; e < epochs; ++e) {
//     loader->set_epoch(e);                // optional: after an epoch the next one follows
//     for (stoker::Batch& b : *loader) { ... b.data(), b.labels(), b.size() ... }
//   }
//
// Two ways to build one: Loader::for_this_process is the policy (it plans, detects the
// world, makes the ranks agree and starts metrics); the constructor is only the mechanism
// and takes the plan and the world as they are (a what-if, a test, a caller that decided).
//
// After fork() the child's copy of a Loader (and of its batches) has no worker threads:
// using it throws stoker::Error ("created in another process"), and destroying it (or the
// child's exit) does not wait for them. Make a new Loader in the child.
//
// Epochs: set_epoch(e) names the epoch the next loop iterates. While epoch e is being
// consumed, the workers already prepare epoch e+1's first batches (the order is a pure
// function of seed and epoch), so the next loop starts without waiting. Starting a loop
// on any other epoch, after a restore, or after breaking out of a loop early, discards
// the prepared batches (nothing is lost: they are made again when needed).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stoker/distributed/sampler.hpp"
#include "stoker/loader/host_pinner.hpp"
#include "stoker/loader/loader_stats.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

// What a corrupt or truncated sample (a SampleError from the source or transform: a
// truncated, zero-byte or garbage file, or one that is not a JPEG or PNG) does.
//  Error: next() throws stoker::Error naming the file (and offset), the sample index, and
//         the option that changes the policy.
//  Skip:  the sample is left out, its file named once on stderr and counted in
//         stats().skipped (and stats().skipped_files); its batch comes with fewer samples
//         (Batch::size() < batch_size, possibly 0). No other sample is substituted, so every
//         rank still makes the same number of steps and no sample is seen twice. Too many
//         skips still stop the loop: see LoaderOptions::max_skip_fraction.
enum class CorruptPolicy { Error, Skip };

// Samples of an epoch attempted on a rank before max_skip_fraction is checked mid-epoch: one
// bad file among the first few samples is no verdict on the dataset.
inline constexpr uint64_t kSkipCheckAfter = 1000;

// How the front end that built the options spells them, for the messages that name them.
struct CorruptOptionNames {
  std::string skip = "on_corrupt = CorruptPolicy::Skip";
  std::string max_skip_fraction = "max_skip_fraction";
};

// Depths are in batches for the whole rank, each within 1..limits::kMaxPrefetch.
struct LoaderOptions {
  size_t batch_size = 0;   // required, > 0
  bool drop_last = false;  // drop the last partial batch, and let the sampler drop
                           // the uneven tail instead of padding it by wrapping
  bool shuffle = true;
  uint64_t seed = 0;
  uint64_t world_size = 0;  // the world: required by the constructor; for_this_process
  uint64_t rank = 0;        // detects it (detect_world: MPI, RANK/WORLD_SIZE, SLURM_*) when 0
  // Check at each loop's start that every rank agrees on the epoch (agree_on_epoch,
  // collective under MPI). false: this loader enters no collective, for a loader that one
  // rank uses alone (an evaluation loader on rank 0); world_size 1 enters none either.
  bool agree = true;
  CorruptPolicy on_corrupt = CorruptPolicy::Error;
  // Under Skip, the largest share of corrupt samples an epoch may have (0..1; 1: no limit).
  // Measured on each rank as skipped / attempted samples of the epoch so far, in delivery
  // order, once kSkipCheckAfter were attempted, and at the end of a shorter epoch; past it
  // next() throws stoker::Error. A half-copied or wrongly mounted dataset stops within its
  // first thousand samples; one bad file in 100 000 never does.
  double max_skip_fraction = 0.01;
  CorruptOptionNames corrupt_names;
  int workers = 0;  // 0: plan.workers; more than the plan's worker CPUs spread over
                    // the rank's CPUs (worker_shares)
  // The ring starts at `prefetch` and the controller moves it within [prefetch, max_depth];
  // the arena holds max_depth + held_batches slots, allocated and touched up front, and
  // they must fit plan.mem_budget (else stoker::Error; nothing is silently made shallower).
  int prefetch = 0;         // 0: plan.prefetch
  int max_depth = 0;        // 0: plan.prefetch_max (or `prefetch` when that is deeper)
  bool adaptive = true;     // false: the depth stays at `prefetch` (max_depth = prefetch)
  int held_batches = 2;     // batches the consumer may hold beyond the ring (Python
                            // tensors alive after their loop iteration); more is
                            // allowed but then the producers wait for releases
  bool pin_threads = true;  // bind each worker to its share (worker_shares)
  // for_this_process, when it plans (options.plan unset): pin the calling thread, the
  // training loop's, to the plan's main CPUs (pin_main_thread; a note when it cannot).
  bool pin_main_thread = true;
  uint64_t shuffle_buffer = 0;  // a streamed source (shard_stream.hpp): samples each
                                // rank holds to shuffle; 0: plan.shuffle_buffer
  // The rank's plan: required by the constructor; for_this_process plans when unset.
  std::optional<Plan> plan;
  std::shared_ptr<HostPinner> pinner;  // page-locks the arena when plan.pin_memory
  // Pin through `pinner` even when the plan does not ask: for a caller that copies every
  // batch to a GPU of its choosing (Python's Loader(to_device=...)).
  bool force_pin = false;
};

class Loader;
class LoaderCore;
class MetricsWriter;
class RunRecorder;
class WorkerPool;

// What a host Batch and a DeviceBatch (cuda_feeder.hpp) both describe: how many samples,
// of what shape, their labels, and where in the epoch they come from. Each is filled and
// moved as one value.
class BatchShape {
 public:
  const SampleSpec& spec() const { return *shape_.spec; }
  size_t size() const { return shape_.size; }          // samples in this batch
  size_t capacity() const { return shape_.capacity; }  // the batch size
  size_t bytes() const { return shape_.size * shape_.spec->bytes(); }
  const int64_t* labels() const { return shape_.labels; }  // size() labels (host or device)
  uint64_t epoch() const { return shape_.epoch; }
  uint64_t number() const { return shape_.number; }  // batch number within the epoch

 protected:
  struct Fields {
    const int64_t* labels = nullptr;
    const SampleSpec* spec = nullptr;
    size_t size = 0, capacity = 0;
    uint64_t epoch = 0, number = 0;
  };
  Fields shape_;
};

// One batch: views of the slot's memory, valid until the Batch is destroyed or released
// (then the slot returns to the pool). Move-only; may outlive its loop iteration and
// even the Loader.
class Batch : public BatchShape {
 public:
  Batch() = default;
  Batch(Batch&& o) noexcept;
  Batch& operator=(Batch&& o) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch() { release(); }

  explicit operator bool() const { return core_ != nullptr; }
  void release();  // returns the slot now (idempotent)

  // Sample data: size() samples of spec().bytes() each, contiguous, 64-byte aligned.
  const std::byte* data() const { return data_; }
  std::byte* data() { return data_; }
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), bytes() / sizeof(T)};
  }
  std::span<const int64_t> label_span() const { return {labels(), size()}; }
  std::span<const uint64_t> indices() const { return {indices_, size()}; }  // dataset indices
  int slot() const { return slot_; }  // arena slot (for a device feeder's map)

 private:
  friend class LoaderCore;
  void clear();  // forgets the slot without returning it
  std::shared_ptr<LoaderCore> core_;
  int slot_ = -1;
  std::byte* data_ = nullptr;
  const uint64_t* indices_ = nullptr;
};

class Loader {
 public:
  // The loader for this process (the policy):
  //  - options.plan unset: plans with plan_for_this_process (the plugin's STOKER_* plan, else
  //    one computed here for this batch size), and (options.pin_main_thread) pins the
  //    calling thread to the plan's main CPUs (pin_main_thread: a note, never an error;
  //    with STOKER_VERBOSE=1 also one line on stderr);
  //  - fits the plan's prefetch depths to the real batch slot and held_batches
  //    (fit_prefetch: a plan from the environment assumed the profile's batch size);
  //  - options.world_size 0: detects the world (detect_world; collective under MPI);
  //  - makes the ranks agree on the seed, dataset and sampler (agree_on_epoch; collective);
  //  - starts STOKER_METRICS (MetricsWriter::from_environment) and, with STOKER_VERBOSE=1,
  //    prints the summary line when destroyed;
  //  - with STOKER_RUN_RECORD_DIR (the plugin's), leaves the run record there when destroyed
  //    (or at exit, or on SIGTERM: run_recorder.hpp).
  // Throws what the constructor throws, and stoker::Error for a plan, world or metrics
  // path it cannot read, or ranks that disagree.
  static std::unique_ptr<Loader> for_this_process(std::shared_ptr<const Source> source,
                                                  std::shared_ptr<const Transform> transform,
                                                  LoaderOptions options);

  // The mechanism: takes options.plan and the world (options.world_size, rank, seed) as
  // they are; plans nothing, detects nothing, agrees with no one, writes no metrics.
  // Throws stoker::Error for: no plan or world; batch size 0; a depth or worker count out
  // of range; a ring (max_depth + held_batches slots) that does not fit the plan's memory
  // budget; worker CPUs not available to this process; a dataset that gives a rank no
  // batch; a transform whose output does not match the slot.
  // For sources whose samples already have the output layout (token windows, records),
  // pass a CopyTransform (stoker/copy_transform.hpp) with the source's spec().
  // A ShardStreamSource whose streamed() is true is read by a reader thread, shard by
  // shard in large sequential reads, through a shuffle buffer (docs/user-guide.md,
  // "Streaming shards"); the batches are as deterministic as by index.
  Loader(std::shared_ptr<const Source> source, std::shared_ptr<const Transform> transform,
         LoaderOptions options);
  // Stops and joins the workers; batches still held stay valid. After an interrupted
  // wait (set_wait_check) it does not wait for the samples in flight: the workers abandon
  // them and end by themselves, keeping what they write to alive until then. In a forked
  // child (where the workers do not exist) it joins and locks nothing: fork_check.hpp.
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  void set_epoch(uint64_t epoch);      // the epoch the next loop iterates
  uint64_t epoch() const;              // the epoch being iterated, or the next one between loops
  uint64_t batches_per_epoch() const;  // of a full epoch on this rank
  uint64_t length() const;             // this rank's samples per full epoch

  // Starts a loop over the epoch named by set_epoch (or the one after the last finished).
  void start_epoch();
  // The epoch the next start_epoch() iterates (a restored state's, else set_epoch's).
  uint64_t next_loop_epoch() const;
  // The next batch of the epoch; nullopt at its end. Starts the epoch when none is running.
  // Throws stoker::Error for a failed sample (sample index, file and offset) or when the
  // consumer holds every slot (it would otherwise wait forever).
  std::optional<Batch> next();
  // Whether next() would return at once: an epoch is running and its next batch (or its
  // end, or a failure to report) is there. A device feeder tops up its copies only then.
  bool next_ready() const;
  // While next() waits for a batch, `check` runs every `every` (without the loader's
  // lock); an exception from it leaves next() with the batch not consumed (the next call
  // waits for it again) and marks the loader interrupted (see ~Loader). The Python module
  // runs the interpreter's signal handlers here, so Ctrl-C and SIGTERM handlers act while a
  // slow batch is awaited. `check` must not call next() or destroy the loader.
  void set_wait_check(std::function<void()> check,
                      std::chrono::milliseconds every = std::chrono::milliseconds(20));

  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    Batch& operator*() { return *current_; }
    Iterator& operator++() {
      current_ = loader_->advance(&*current_);  // gives the previous batch back first
      return *this;
    }
    bool operator==(std::default_sentinel_t) const { return !current_.has_value(); }

   private:
    friend class Loader;
    explicit Iterator(Loader* l) : loader_(l), current_(l->next()) {}
    Loader* loader_;
    std::optional<Batch> current_;
  };
  Iterator begin() {
    start_epoch();
    return Iterator(this);
  }
  std::default_sentinel_t end() { return {}; }

  // Resume state: position = batches handed out in the current epoch x batch size, less the
  // last `held_back` of them: a consumer that takes batches ahead of its training loop
  // (Python's device copies take one) resumes from what the loop itself got.
  SamplerState state(uint64_t held_back = 0) const;
  // The next loop continues the state's epoch from its position (any world size).
  void restore(const SamplerState& state);

  LoaderStats stats() const;
  const Plan& plan() const;  // the plan the loader runs (fitted to the batch by for_this_process)
  // Where plan() came from: "the STOKER_* environment (...)", "computed on <topology>", or
  // "given by the caller" (options.plan).
  const std::string& plan_source() const { return plan_source_; }
  const SampleSpec& spec() const;
  const DistributedSampler& sampler() const;  // the configured sampler (epoch 0)
  int depth() const;                          // batches in flight now (the controller moves it)

 private:
  std::optional<Batch> advance(Batch* done);
  void check_process() const;  // stoker::Error in a forked child (fork_check.hpp)
  std::shared_ptr<LoaderCore> core_;
  std::unique_ptr<WorkerPool> pool_;
  std::vector<std::string> notes_;          // from construction (binding)
  std::unique_ptr<MetricsWriter> metrics_;  // STOKER_METRICS; stopped first in ~Loader
  std::unique_ptr<RunRecorder> record_;     // STOKER_RUN_RECORD_DIR; written at close
  bool summary_at_exit_ = false;            // STOKER_VERBOSE (for_this_process)
  std::string plan_source_ = "given by the caller";
  std::string agreement_;  // what checks the ranks (agreement_mode), for stats()
};

}  // namespace stoker
