// The Loader's construction (checks, sizing) and its thin public API over LoaderCore.
#include "stoker/loader/loader.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "loader/batch_arena.hpp"
#include "loader/loader_core.hpp"
#include "loader/worker_pool.hpp"
#include "stoker/distributed/coordination.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/loader/shard_stream.hpp"
#include "stoker/plan/local_plan.hpp"
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
    labels_ = std::exchange(o.labels_, nullptr);
    indices_ = std::exchange(o.indices_, nullptr);
    spec_ = std::exchange(o.spec_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    epoch_ = o.epoch_;
    number_ = o.number_;
  }
  return *this;
}

void Batch::release() {
  if (core_) {
    core_->release(slot_);
    clear();
  }
}

void Batch::clear() {
  core_.reset();
  slot_ = -1;
  data_ = nullptr;
  labels_ = nullptr;
  indices_ = nullptr;
  size_ = 0;
}

// ---- Loader ----

namespace {

std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " bytes";
}

// How many slots the arena gets and how deep the ring may grow, within the budget.
LoaderCore::Setup size_ring(LoaderCore::Setup s) {
  const LoaderOptions& o = s.options;
  const Plan& plan = *o.plan;
  const uint64_t slot = BatchArena::slot_bytes_for(o.batch_size, s.spec.bytes());
  const int initial = o.prefetch > 0 ? o.prefetch : std::max(plan.prefetch, 1);
  int held = std::max(o.held_batches, 1);
  // Room to grow without reserving (and touching) the whole budget up front.
  int max_depth = o.max_depth > 0 ? o.max_depth : std::clamp(4 * initial, 8, 64);
  if (plan.mem_budget > 0) {
    const uint64_t fit = plan.mem_budget / slot;
    if (fit < 2) {
      throw Error("batch size",
                  "a batch of " + std::to_string(o.batch_size) + " samples x " +
                      bytes_text(s.spec.bytes()) + " (a slot of " + bytes_text(slot) +
                      ") fits fewer than 2 times in the plan's memory budget of " +
                      bytes_text(plan.mem_budget),
                  "lower the batch size or raise the budget (STOKER_MEM_BUDGET, the "
                  "profile's MemShare)");
    }
    held = static_cast<int>(std::min<uint64_t>(held, fit - 1));
    max_depth = static_cast<int>(std::min<uint64_t>(max_depth, fit - held));
  } else {
    max_depth = std::min(max_depth, initial);  // no budget known: never grow
  }
  s.slots = max_depth + held;
  s.controller.initial_depth = initial;
  s.controller.min_depth = std::min(2, max_depth);
  s.controller.max_depth = max_depth;
  s.controller.batch_bytes = slot;
  s.controller.mem_budget = plan.mem_budget;
  return s;
}

DistributedSampler make_sampler(const Source& source, const LoaderOptions& o) {
  SamplerOptions so;
  so.size = source.size();
  so.seed = o.seed;
  so.world_size = o.world_size;
  so.rank = o.rank;
  if (o.world_size == 0) {
    WorldInfo w = detect_world();
    so.world_size = w.world_size;
    so.rank = w.rank;
  }
  so.shuffle = o.shuffle;
  so.drop_last = o.drop_last;
  so.fingerprint = source.fingerprint();
  if (const auto* shards = dynamic_cast<const ShardStreamSource*>(&source);
      shards != nullptr && shards->streamed()) {
    so.shards = std::make_shared<const std::vector<uint64_t>>(shards->shard_samples());
    so.shuffle_buffer = o.shuffle_buffer > 0 ? o.shuffle_buffer : o.plan->shuffle_buffer;
  }
  if (so.size == 0) throw Error(source.describe(), "the dataset has no samples");
  so.seed = agree_on_epoch(so, 0);  // rank 0's seed under MPI
  return DistributedSampler(so);
}

void check_worker_cpus(const Plan& plan) {
  const CpuSet allowed = process_allowed_cpus();
  if (!plan.worker_cpus.is_subset_of(allowed)) {
    throw Error("plan worker CPUs",
                "CPUs " + (plan.worker_cpus - allowed).to_string() + " of the worker set " +
                    plan.worker_cpus.to_string() +
                    " are not available to this process (it may use " + allowed.to_string() + ")",
                "use the plan made for this task (run under srun with the stoker plugin), or "
                "a plan computed in this process");
  }
}

}  // namespace

Loader::Loader(std::shared_ptr<const Source> source, std::shared_ptr<const Transform> transform,
               LoaderOptions options) {
  if (!source) throw Error("loader source", "no source given");
  if (!transform) {
    throw Error("loader transform", "no transform given",
                "pass a CopyTransform with the source's spec for raw samples");
  }
  if (options.batch_size == 0) throw Error("batch size", "batch size 0", "use a batch size >= 1");
  const SampleSpec spec = transform->output_spec();
  if (spec.bytes() == 0) {
    throw Error(transform->describe(), "the transform's output sample has 0 bytes");
  }
  if (!options.plan) {  // this process's plan: the plugin's STOKER_* or computed here
    PlanRequest request;
    request.batch_bytes = options.batch_size * spec.bytes();
    LocalPlan local = plan_this_process(request);
    options.plan = std::move(local.plan);
    notes_.push_back("plan from " + local.source);
  }
  const Plan plan = *options.plan;
  DistributedSampler sampler = make_sampler(*source, options);
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
  if (options.pin_threads && !plan.worker_cpus.empty()) check_worker_cpus(plan);
  const int workers = std::max(options.workers > 0 ? options.workers : plan.workers, 1);
  std::vector<CpuSet> shares =
      options.pin_threads ? split_cpus(plan.worker_cpus, workers) : std::vector<CpuSet>(workers);
  if (options.pin_threads && plan.worker_cpus.empty()) {
    notes_.push_back("workers not pinned: the plan names no worker CPUs");
  }
  if (sampler.options().shards) {
    notes_.push_back("streaming " + std::to_string(sampler.options().shards->size()) +
                     " shards: whole shards in large sequential reads, shuffle buffer of " +
                     std::to_string(sampler.options().shuffle_buffer) + " samples");
  }
  LoaderCore::Setup setup =
      size_ring({source, transform, spec, std::move(options), sampler, workers, 2, {}});
  core_ = std::make_shared<LoaderCore>(std::move(setup));
  LoaderCore* core = core_.get();
  pool_ = std::make_unique<WorkerPool>(std::move(shares), [core](int w) { core->work(w); });
  try {
    core_->wait_started();
    for (const std::string& why : pool_->bind_failures()) {
      if (!why.empty()) notes_.push_back(why);
    }
    for (std::string& n : core_->pin_arena()) notes_.push_back(std::move(n));
    core_->open();
    metrics_ =
        MetricsWriter::from_environment([this] { return stats(); }, this->sampler().options().rank);
  } catch (...) {
    core_->stop();
    pool_.reset();
    throw;
  }
}

Loader::~Loader() {
  metrics_.reset();  // its thread calls stats(): stop it while the core is alive
  if (verbose_from_environment())
    std::fprintf(stderr, "%s\n", summary_line(stats(), sampler().options().rank).c_str());
  core_->stop();
  pool_.reset();
}

void Loader::set_epoch(uint64_t epoch) {
  core_->set_epoch(epoch);
}
uint64_t Loader::epoch() const {
  return core_->epoch();
}
uint64_t Loader::batches_per_epoch() const {
  return core_->batches_per_epoch();
}
uint64_t Loader::length() const {
  return core_->length();
}
void Loader::start_epoch() {
  core_->start_epoch();
}
std::optional<Batch> Loader::next() {
  return core_->next();
}
std::optional<Batch> Loader::advance(Batch* done) {
  return core_->next(done);
}
SamplerState Loader::state() const {
  return core_->state();
}
void Loader::restore(const SamplerState& state) {
  core_->restore(state);
}
LoaderStats Loader::stats() const {
  LoaderStats st = core_->stats(notes_, pool_->threads_created());
  st.stream_reads = core_->stream_reads();
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
  return core_->depth();
}

}  // namespace stoker
