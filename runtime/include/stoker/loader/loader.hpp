// The loader: persistent pinned worker threads read, transform and collate samples
// straight into recycled batch slots; a prefetch ring hands the batches to the consumer
// in sampler order. See runtime/README.md, "The loader".
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
#include "stoker/loader/batch.hpp"
#include "stoker/loader/host_pinner.hpp"
#include "stoker/loader/loader_options.hpp"
#include "stoker/loader/loader_stats.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

class Loader;
class LoaderCore;
struct DatasetSpec;
class MetricsWriter;
class RunRecorder;
class WorkerPool;

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

  // for_this_process for a dataset: plans once, as soon as the sample is known, and opens the
  // dataset under that plan (open_dataset, stoker/loader/dataset.hpp: the one owner of
  // opening a dataset, of listing an image folder once per job and of whether shards
  // stream). Throws what open_dataset and for_this_process throw.
  static std::unique_ptr<Loader> open(const DatasetSpec& spec, LoaderOptions options);

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
  // Stops and joins the workers; batches still held stay valid. After interrupt() it does
  // not wait for the samples in flight: the workers abandon
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
  // next() that waits at most `limit`. NotYet: the batch is not there by then; nothing is
  // consumed, the next call asks for the same batch, and the wait the stats and the
  // controller see runs from the first ask. A front end that must run code while a slow
  // batch is awaited (Python's signal handlers: Ctrl-C, a SIGTERM handler that checkpoints)
  // calls it in slices. `out` holds the batch when it returns Batch.
  enum class Next { Batch, End, NotYet };
  Next next_within(std::chrono::nanoseconds limit, std::optional<Batch>& out);
  // The consumer gave up on a wait (a signal ended its loop): destroying the loader then
  // does not wait for the samples in flight (see ~Loader).
  void interrupt();

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
  uint64_t dataset_size() const;              // the source's samples
  size_t batch_size() const;                  // samples in a full batch
  const Source& source() const;
  const Transform& transform() const;
  std::string describe() const;  // the source's, the transform's and the mixing's descriptions
  const BatchMix* mix() const;   // the batches' MixUp/CutMix (LoaderOptions::mix), or null
  // An image folder's class names in label order (opened by Loader::open); else empty.
  const std::vector<std::string>& classes() const { return classes_; }

 private:
  struct Planned;
  static Planned plan_options(LoaderOptions& options, uint64_t slot);
  static void find_world(LoaderOptions& options);
  static std::unique_ptr<Loader> finish(std::shared_ptr<const Source> source,
                                        std::shared_ptr<const Transform> transform,
                                        LoaderOptions options, const Planned& planned);
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
  std::vector<std::string> classes_;
};

}  // namespace stoker
