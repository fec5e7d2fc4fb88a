// How a loader for this process is made (the policy: Loader::for_this_process and
// Loader::open): plan (the plugin's, or one computed for this batch), fit the depths to the
// batch, find the world, open the dataset under the plan, agree on the seed, and start the
// metrics, the run record and the summary line. The mechanism is Loader's constructor.
#include <cstdio>

#include "loader/batch_arena.hpp"
#include "loader/loader_checks.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/loader/dataset.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/loader/run_recorder.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/main_thread.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

namespace {

// The plugin's budget (STOKER_MEM_BUDGET) cannot hold `held` batches and one in flight.
[[noreturn]] void throw_budget_below_batches(uint64_t budget, uint64_t slot, int held) {
  throw Error("STOKER_MEM_BUDGET",
              "is " + bytes_text(budget) + ", below the " + std::to_string(held + 1) +
                  " batch(es) of " + bytes_text(slot) + " the loader needs (" +
                  std::to_string(held) + " held by the consumer and one in flight)",
              "raise STOKER_MEM_BUDGET (the profile's MemShare, the job's memory), or lower "
              "batch_size or held_batches");
}

}  // namespace

// What planning for a loader found, for the notes and lines of the loader it makes.
struct Loader::Planned {
  std::string source, main_thread;
  bool within_narrower_mask = false;
};

Loader::Planned Loader::plan_options(LoaderOptions& options, uint64_t slot) {
  Planned p;
  bool from_environment = false;
  if (!options.plan) {  // the plugin's STOKER_* plan, or one computed for this batch
    PlanRequest request;
    request.batch_bytes = slot;
    LocalPlan local = plan_for_this_process(request);
    options.plan = std::move(local.plan);
    p.source = std::move(local.source);
    from_environment = local.from_environment;
    p.within_narrower_mask = local.within_narrower_mask;
    if (options.pin_main_thread) p.main_thread = pin_main_thread(*options.plan).note;
  }
  // A plan from the environment assumed the profile's batch size: fit it to the real one.
  if (options.plan->mem_budget > 0 && !fit_prefetch(*options.plan, slot, options.held_batches) &&
      from_environment) {
    throw_budget_below_batches(options.plan->mem_budget, slot, options.held_batches);
  }
  return p;
}

void Loader::find_world(LoaderOptions& options) {
  if (options.world_size == 0) {
    const World w = detect_world();
    options.world_size = w.world_size;
    options.rank = w.rank;
  }
}

std::unique_ptr<Loader> Loader::for_this_process(std::shared_ptr<const Source> source,
                                                 std::shared_ptr<const Transform> transform,
                                                 LoaderOptions options) {
  const SampleSpec spec = checked_spec(source, transform, options);
  const Planned planned = plan_options(
      options, BatchArena::slot_bytes_for(options.batch_size, spec.bytes(), options.label_bytes()));
  find_world(options);
  return finish(std::move(source), std::move(transform), std::move(options), planned);
}

std::unique_ptr<Loader> Loader::open(const DatasetSpec& spec, LoaderOptions options) {
  check_batch_size(options);
  find_world(options);
  Planned planned;
  const Dataset d = open_dataset(
      spec,
      [&](const SampleSpec& sample) -> const Plan& {
        planned =
            plan_options(options, BatchArena::slot_bytes_for(options.batch_size, sample.bytes()));
        return *options.plan;
      },
      options.world_size, options.agree);
  if (d.mix) {  // the targets' rows, known once the classes were listed: fit the depths again
    options.mix = d.mix;
    const SampleSpec sample = d.transform->output_spec();
    if (options.plan->mem_budget > 0) {
      fit_prefetch(
          *options.plan,
          BatchArena::slot_bytes_for(options.batch_size, sample.bytes(), d.mix->label_bytes()),
          options.held_batches);
    }
  }
  auto loader = finish(d.source, d.transform, std::move(options), planned);
  loader->classes_ = d.classes;
  return loader;
}

std::unique_ptr<Loader> Loader::finish(std::shared_ptr<const Source> source,
                                       std::shared_ptr<const Transform> transform,
                                       LoaderOptions options, const Planned& planned) {
  if (options.agree) {  // rank 0's seed under MPI
    options.seed = agree_on_epoch(sampler_options(*source, options), 0);
  }
  const uint64_t rank = options.rank;
  auto loader =
      std::make_unique<Loader>(std::move(source), std::move(transform), std::move(options));
  if (!planned.source.empty()) {
    loader->plan_source_ = planned.source;
    loader->notes_.insert(loader->notes_.begin(), "plan from " + planned.source);
  }
  if (!planned.main_thread.empty())
    loader->notes_.insert(loader->notes_.begin() + 1, planned.main_thread);
  Loader* l = loader.get();
  loader->metrics_ = MetricsWriter::from_environment([l] { return l->stats(); }, rank);
  loader->record_ = RunRecorder::from_environment(
      rank, [l] { return l->stats(); }, l->plan());
  loader->summary_at_exit_ = verbose_from_environment();
  if (loader->summary_at_exit_ && planned.within_narrower_mask)  // a binder's mask kept: say so
    std::fprintf(stderr, "stoker: rank %llu: plan %s\n", static_cast<unsigned long long>(rank),
                 planned.source.c_str());
  if (loader->summary_at_exit_ && !planned.main_thread.empty())
    std::fprintf(stderr, "stoker: rank %llu: %s\n", static_cast<unsigned long long>(rank),
                 planned.main_thread.c_str());
  return loader;
}

}  // namespace stoker
