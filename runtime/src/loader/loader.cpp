// The Loader's construction (checks, sizing) and its thin public API over LoaderCore.
#include "stoker/loader/loader.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "loader/batch_arena.hpp"
#include "loader/loader_checks.hpp"
#include "loader/loader_core.hpp"
#include "loader/worker_pool.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/loader/run_recorder.hpp"
#include "stoker/loader/worker_shares.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/main_thread.hpp"
#include "stoker/sources/shard_stream.hpp"
#include "topology/process_hwloc.hpp"

namespace stoker {

// ---- Batch ----

Batch::Batch(Batch&& o) noexcept {
  *this = std::move(o);
}

Batch& Batch::operator=(Batch&& o) noexcept {
  if (this != &o) {
    release();
    core_ = std::move(o.core_);
    slot_ = std::exchange(o.slot_, -1);
    data_ = std::exchange(o.data_, nullptr);
    indices_ = std::exchange(o.indices_, nullptr);
    shape_ = std::exchange(o.shape_, {});
  }
  return *this;
}

void Batch::release() {
  if (!core_) return;
  if (core_->made_in().forked()) {
    leak_in_forked_child(std::move(core_));
  } else {
    core_->release(slot_);
  }
  clear();
}

void Batch::clear() {
  core_.reset();
  slot_ = -1;
  data_ = nullptr;
  indices_ = nullptr;
  shape_.labels = nullptr;
  shape_.size = 0;
}

// ---- Loader ----

void check_batch_size(const LoaderOptions& options) {
  if (options.batch_size == 0)
    throw Error("LoaderOptions::batch_size", "batch size 0", "use a batch size >= 1");
}

SampleSpec checked_spec(const std::shared_ptr<const Source>& source,
                        const std::shared_ptr<const Transform>& transform,
                        const LoaderOptions& options) {
  if (!source) throw Error("loader source", "no source given");
  if (!transform) {
    throw Error("loader transform", "no transform given",
                "pass a CopyTransform with the source's spec for raw samples");
  }
  check_batch_size(options);
  SampleSpec spec = transform->output_spec();
  if (spec.bytes() == 0) {
    throw Error(transform->describe(), "the transform's output sample has 0 bytes");
  }
  return spec;
}

SamplerOptions sampler_options(const Source& source, const LoaderOptions& o) {
  SamplerOptions so;
  so.size = source.size();
  so.seed = o.seed;
  so.world_size = o.world_size;
  so.rank = o.rank;
  so.shuffle = o.shuffle;
  so.drop_last = o.drop_last;
  so.ra_reps = o.ra_reps;
  so.fingerprint = source.fingerprint();
  if (const auto* shards = dynamic_cast<const ShardStreamSource*>(&source);
      shards != nullptr && shards->streamed()) {
    so.shards = std::make_shared<const std::vector<uint64_t>>(shards->shard_samples());
    so.shuffle_buffer = o.shuffle_buffer > 0 ? o.shuffle_buffer : o.plan->shuffle_buffer;
  }
  if (so.size == 0) throw Error(source.describe(), "the dataset has no samples");
  return so;
}

namespace {

// `value` within [lo, limits::kMaxPrefetch], else an Error naming where it came from.
int checked_depth(const std::string& what, int value, int lo) {
  if (value < lo || value > limits::kMaxPrefetch) {
    throw Error(what,
                "is " + std::to_string(value) + ", outside " + std::to_string(lo) + ".." +
                    std::to_string(limits::kMaxPrefetch),
                "give a depth in batches within that range");
  }
  return value;
}

// The ring as the plan (or an explicit caller's options) says, taken as it is: it starts at
// prefetch, the controller moves it within [prefetch, prefetch_max], and the arena holds
// prefetch_max + held_batches slots. A ring that does not fit the plan's memory budget is
// an error, never silently made shallower: Loader::for_this_process fits the plan to the
// batch first (fit_prefetch).
LoaderCore::Setup size_ring(LoaderCore::Setup s) {
  const LoaderOptions& o = s.options;
  const Plan& plan = *o.plan;
  const int start = o.prefetch != 0 ? checked_depth("LoaderOptions::prefetch", o.prefetch, 1)
                                    : checked_depth("the plan's prefetch", plan.prefetch, 1);
  int max = o.max_depth != 0
                ? checked_depth("LoaderOptions::max_depth", o.max_depth, start)
                : checked_depth("the plan's prefetch_max", std::max(plan.prefetch_max, start), 1);
  if (!o.adaptive) max = start;
  const int held = checked_depth("LoaderOptions::held_batches", o.held_batches, 1);
  const uint64_t slot = BatchArena::slot_bytes_for(o.batch_size, s.spec.bytes());
  const uint64_t slots = static_cast<uint64_t>(max + held);
  if (plan.mem_budget > 0 && slots * slot > plan.mem_budget) {
    throw Error("LoaderOptions::batch_size",
                "a batch of " + std::to_string(o.batch_size) + " samples x " +
                    bytes_text(s.spec.bytes()) + " (a slot of " + bytes_text(slot) + ") fits " +
                    std::to_string(plan.mem_budget / slot) +
                    " time(s) in the plan's memory budget of " + bytes_text(plan.mem_budget) +
                    "; the loader needs " + std::to_string(slots) + " slots (a ring of up to " +
                    std::to_string(max) + " batches + " + std::to_string(held) + " held)",
                "lower the batch size, the depth (prefetch_max, LoaderOptions::max_depth) or "
                "held_batches, or raise the budget (STOKER_MEM_BUDGET, the profile's MemShare)");
  }
  s.slots = static_cast<int>(slots);
  s.controller.initial_depth = start;
  s.controller.min_depth = start;
  s.controller.max_depth = max;
  return s;
}

int checked_workers(const LoaderOptions& o, const Plan& plan) {
  const int workers = o.workers != 0 ? o.workers : plan.workers;
  if (workers < 1 || workers > limits::kMaxWorkers) {
    throw Error(
        o.workers != 0 ? "LoaderOptions::workers" : "the plan's workers",
        "is " + std::to_string(workers) + ", outside 1.." + std::to_string(limits::kMaxWorkers));
  }
  return workers;
}

void check_worker_cpus(const std::vector<CpuSet>& shares) {
  CpuSet used;
  for (const CpuSet& share : shares) used = used | share;
  const CpuSet allowed = process_allowed_cpus();
  if (!used.is_subset_of(allowed)) {
    throw Error("plan worker CPUs",
                "CPUs " + (used - allowed).to_string() + " of the workers' CPUs " +
                    used.to_string() + " are not available to this process (it may use " +
                    allowed.to_string() + ")",
                "use the plan made for this task (run under srun with the stoker plugin), or "
                "a plan computed in this process");
  }
}

}  // namespace

Loader::Loader(std::shared_ptr<const Source> source, std::shared_ptr<const Transform> transform,
               LoaderOptions options) {
  const SampleSpec spec = checked_spec(source, transform, options);
  if (!options.plan) {
    throw Error("LoaderOptions::plan", "is not set",
                "give the rank's plan, or build the loader with Loader::for_this_process");
  }
  if (options.world_size == 0) {
    throw Error("LoaderOptions::world_size", "is 0",
                "give the world (world_size and rank), or build the loader with "
                "Loader::for_this_process");
  }
  const Plan& plan = *options.plan;
  DistributedSampler sampler(sampler_options(*source, options));
  const uint64_t batches = options.drop_last
                               ? sampler.length() / options.batch_size
                               : (sampler.length() + options.batch_size - 1) / options.batch_size;
  if (batches == 0) {
    throw Error(source->describe(),
                "gives this rank " + std::to_string(sampler.length()) + " of " +
                    std::to_string(source->size()) + " samples, fewer than one batch of " +
                    std::to_string(options.batch_size) + " with drop_last",
                "use a smaller batch, fewer ranks, or drop_last = false");
  }
  const int workers = checked_workers(options, plan);
  std::vector<CpuSet> shares(static_cast<size_t>(workers));
  if (options.pin_threads) {
    shares = worker_shares(plan, workers);
    check_worker_cpus(shares);
    if (plan.worker_cpus.empty()) {
      notes_.push_back("workers not pinned: the plan names no worker CPUs");
    } else if (workers > plan.worker_cpus.count() && plan.cpus != plan.worker_cpus) {
      notes_.push_back(std::to_string(workers) + " workers > " +
                       std::to_string(plan.worker_cpus.count()) + " worker CPU(s) " +
                       plan.worker_cpus.to_string() + ": spread over the rank's CPUs " +
                       plan.cpus.to_string());
    }
  }
  if (sampler.options().shards) {
    notes_.push_back("streaming " + std::to_string(sampler.options().shards->size()) +
                     " shards: whole shards in large sequential reads, shuffle buffer of " +
                     std::to_string(sampler.options().shuffle_buffer) + " samples");
  }
  agreement_ = agreement_mode(options.rank, options.world_size, options.agree);
  LoaderCore::Setup setup =
      size_ring({source, transform, spec, std::move(options), sampler, workers, 0, {}});
  core_ = std::make_shared<LoaderCore>(std::move(setup));
  LoaderCore* raw = core_.get();
  try {
    // Each worker holds the core: after an interrupt (~Loader) it may outlive the Loader.
    pool_ = std::make_unique<WorkerPool>(
        std::move(shares), [core = core_](int w) { core->work(w); }, [raw] { raw->stop(); });
    core_->wait_started();
    for (const std::string& why : pool_->bind_failures()) {
      if (!why.empty()) notes_.push_back(why);
    }
    for (std::string& n : core_->pin_arena()) notes_.push_back(std::move(n));
    core_->open();
  } catch (...) {
    core_->stop();
    pool_.reset();
    throw;
  }
}

Loader::~Loader() {
  if (core_->made_in().forked()) {  // none of the threads exists here; locks may be held
    leak_in_forked_child(std::move(core_));
    (void)pool_.release();
    (void)metrics_.release();
    (void)record_.release();
    return;
  }
  if (record_) {  // the record first: the summary line and the workers' stop follow it
    record_->write("close");
    record_.reset();
  }
  metrics_.reset();  // its thread calls stats(): stop it while the core is alive
  if (summary_at_exit_)
    std::fprintf(stderr, "%s\n", summary_line(stats(), sampler().options().rank).c_str());
  core_->stop();
  if (core_->interrupted()) pool_->abandon();  // the samples in flight are not waited for
  pool_.reset();
}

void Loader::check_process() const {
  core_->made_in().check("stoker::Loader");
}

void Loader::set_epoch(uint64_t epoch) {
  check_process();
  core_->set_epoch(epoch);
}
uint64_t Loader::epoch() const {
  check_process();
  return core_->epoch();
}
uint64_t Loader::batches_per_epoch() const {
  return core_->batches_per_epoch();
}
uint64_t Loader::length() const {
  return core_->length();
}
void Loader::start_epoch() {
  check_process();
  core_->start_epoch();
}
uint64_t Loader::next_loop_epoch() const {
  return core_->next_loop().epoch();
}
std::optional<Batch> Loader::next() {
  check_process();
  return core_->next();
}
bool Loader::next_ready() const {
  check_process();
  return core_->next_ready();
}
Loader::Next Loader::next_within(std::chrono::nanoseconds limit, std::optional<Batch>& out) {
  check_process();
  switch (core_->next_within(limit, out)) {
    case LoaderCore::Delivery::Batch:
      return Next::Batch;
    case LoaderCore::Delivery::End:
      return Next::End;
    case LoaderCore::Delivery::NotYet:
      break;
  }
  return Next::NotYet;
}
void Loader::interrupt() {
  core_->interrupt();
}
std::optional<Batch> Loader::advance(Batch* done) {
  check_process();
  return core_->next(done);
}
SamplerState Loader::state(uint64_t held_back) const {
  check_process();
  return core_->state(held_back);
}
void Loader::restore(const SamplerState& state) {
  check_process();
  core_->restore(state);
}
LoaderStats Loader::stats() const {
  check_process();
  LoaderStats st = core_->stats(notes_, pool_->threads_created());
  st.stream_reads = core_->stream_reads();
  st.agreement = agreement_;
  return st;
}
const Plan& Loader::plan() const {
  return core_->plan();
}
const SampleSpec& Loader::spec() const {
  return core_->spec();
}
const DistributedSampler& Loader::sampler() const {
  return core_->sampler();
}
int Loader::depth() const {
  check_process();
  return core_->depth();
}
uint64_t Loader::dataset_size() const {
  return core_->source().size();
}
size_t Loader::batch_size() const {
  return core_->batch_size();
}
const Source& Loader::source() const {
  return core_->source();
}
const Transform& Loader::transform() const {
  return core_->transform();
}
std::string Loader::describe() const {
  return core_->source().describe() + " | " + core_->transform().describe();
}

}  // namespace stoker
