// The rows of what a run measures (run_measures.hpp). Prometheus's series come first, in the
// order the metrics file has always listed them; the names of series, stats() keys and
// record keys are the released ones (renames keep the old name: `old_stats`).
#include "stoker/plan/run_measures.hpp"

#include <stdexcept>

namespace stoker {

namespace {

using M = Measure;
using U = MeasureUnit;
using R = RunRecord;

constexpr const char* kStageHelp = "Worker seconds spent per pipeline stage, summed over the workers.";
constexpr const char* kPlanLine = "the plan line of each step (text, HTML)";

std::vector<MeasureRow> rows() {
  return {
      {.id = M::Samples, .name = "samples", .unit = U::Count,
       .help = "Samples delivered to the consumer.", .stats = "samples",
       .prom = "stoker_samples_total", .prom_type = "counter", .record = &R::samples},
      {.id = M::Batches, .name = "batches", .unit = U::Count,
       .help = "Batches delivered to the consumer.", .stats = "batches",
       .prom = "stoker_batches_total", .prom_type = "counter", .record = &R::batches},
      {.id = M::Bytes, .name = "bytes", .unit = U::Bytes,
       .help = "Sample bytes delivered to the consumer.", .stats = "bytes",
       .prom = "stoker_bytes_total", .prom_type = "counter"},
      {.id = M::Skipped, .name = "skipped", .unit = U::Count, .help = "Corrupt samples left out.",
       .stats = "skipped", .prom = "stoker_samples_skipped_total", .prom_type = "counter",
       .record = &R::skipped},
      {.id = M::DecodeWarnings, .name = "decode_warnings", .unit = U::Count,
       .help = "Samples delivered although their decoder warned about them.",
       .stats = "decode_warnings",
       .prom = "stoker_decode_warnings_total", .prom_type = "counter",
       .record = &R::decode_warnings},
      {.id = M::SamplesPerSecond, .name = "samples_per_s", .unit = U::PerSecond,
       .help = "Mean throughput since the first batch was asked for, in samples per second.",
       .stats = "samples_per_s", .prom = "stoker_samples_per_second", .prom_type = "gauge",
       .record = &R::samples_per_s, .record_max = 1e12,
       .report = "samples/s of each step: the sum over its ranks"},
      {.id = M::BytesPerSecond, .name = "bytes_per_s", .unit = U::PerSecond,
       .help = "Mean throughput since the first batch was asked for, in bytes per second.",
       .stats = "bytes_per_s", .prom = "stoker_bytes_per_second", .prom_type = "gauge"},
      {.id = M::Wall, .name = "seconds", .unit = U::Nanoseconds,
       .help = "Seconds since the consumer first asked for a batch.", .stats = "wall_ns",
       .prom = "stoker_wall_seconds_total", .prom_type = "counter", .record = &R::seconds,
       .record_max = 1e9},
      {.id = M::ConsumerWait, .name = "consumer_wait", .unit = U::Nanoseconds,
       .help = "Seconds the consumer blocked waiting for a batch.", .stats = "consumer_wait_ns",
       .prom = "stoker_consumer_wait_seconds_total", .prom_type = "counter"},
      {.id = M::WaitShare, .name = "wait_share", .unit = U::Ratio,
       .help = "Share of the wall time the consumer was starved (0 to 1).",
       .stats = "wait_share", .prom = "stoker_consumer_wait_ratio", .prom_type = "gauge",
       .record = &R::wait_share, .record_max = 1,
       .report = "input wait: the steps are ordered by it (the mean over ranks; the worst rank)"},
      {.id = M::Depth, .name = "depth", .unit = U::Batches,
       .help = "Batches the loader keeps in flight now.", .stats = "depth",
       .prom = "stoker_prefetch_depth_batches", .prom_type = "gauge"},
      {.id = M::PrefetchMax, .name = "prefetch_max", .unit = U::Batches,
       .help = "The most batches in flight the memory budget allows (prefetch_max).",
       .stats = "prefetch_max", .prom = "stoker_prefetch_max_batches", .prom_type = "gauge",
       .record = &R::prefetch_max, .report = kPlanLine, .old_stats = "max_depth"},
      {.id = M::Workers, .name = "workers", .unit = U::Count, .help = "Loader worker threads.",
       .stats = "workers", .prom = "stoker_workers", .prom_type = "gauge",
       .record = &R::workers, .report = kPlanLine},
      {.id = M::MemBudget, .name = "mem_budget", .unit = U::Bytes,
       .help = "The plan's prefetch memory budget in bytes.", .stats = "mem_budget",
       .prom = "stoker_memory_budget_bytes", .prom_type = "gauge", .record = &R::mem_budget},
      {.id = M::StageRead, .name = "stage_read", .unit = U::Nanoseconds, .help = kStageHelp,
       .stats = "read_ns", .group = "stages", .prom = "stoker_stage_seconds_total",
       .prom_type = "counter", .prom_label = "stage=\"read\""},
      {.id = M::StageDecode, .name = "stage_decode", .unit = U::Nanoseconds, .help = kStageHelp,
       .stats = "decode_ns", .group = "stages", .prom = "stoker_stage_seconds_total",
       .prom_type = "counter", .prom_label = "stage=\"decode\""},
      {.id = M::StageTransform, .name = "stage_transform", .unit = U::Nanoseconds,
       .help = kStageHelp, .stats = "transform_ns", .group = "stages",
       .prom = "stoker_stage_seconds_total", .prom_type = "counter",
       .prom_label = "stage=\"transform\""},
      {.id = M::StageCollate, .name = "stage_collate", .unit = U::Nanoseconds,
       .help = kStageHelp, .stats = "collate_ns", .group = "stages",
       .prom = "stoker_stage_seconds_total", .prom_type = "counter",
       .prom_label = "stage=\"collate\""},
      {.id = M::Produce, .name = "produce", .unit = U::Nanoseconds,
       .help = "Worker seconds spent making the delivered batches (all stages).",
       .stats = "produce_ns", .prom = "stoker_produce_seconds_total", .prom_type = "counter"},
      // Not exported to Prometheus.
      {.id = M::DiscardedBatches, .name = "discarded_batches", .unit = U::Batches,
       .help = "Batches prepared for an epoch that was not iterated after all.",
       .stats = "discarded_batches"},
      {.id = M::DepthReached, .name = "depth_reached", .unit = U::Batches,
       .help = "The deepest ring of the run.", .stats = "depth_reached",
       .record = &R::depth_reached, .report = kPlanLine},
      {.id = M::AtMaxShare, .name = "at_max_share", .unit = U::Ratio,
       .help = "Share of the run with the ring at prefetch_max (0 to 1).",
       .stats = "at_max_share", .record = &R::at_max_share, .record_max = 1,
       .report = "the suggested change (advise)"},
      {.id = M::BudgetDepth, .name = "budget_depth", .unit = U::Batches,
       .help = "The deepest ring the memory budget holds.", .stats = "budget_depth",
       .record = &R::budget_depth, .report = "the suggested change (advise)"},
      {.id = M::ThreadsCreated, .name = "threads_created", .unit = U::Count,
       .help = "Worker threads created: stays equal to workers (epochs never create threads).",
       .stats = "threads_created"},
      {.id = M::Slots, .name = "slots", .unit = U::Count,
       .help = "Batch slots in the arena (prefetch_max and the batches the consumer holds).",
       .stats = "slots"},
      {.id = M::SlotBytes, .name = "slot_bytes", .unit = U::Bytes,
       .help = "Bytes of one batch slot.", .stats = "slot_bytes", .record = &R::slot_bytes},
      {.id = M::ArenaBytes, .name = "arena_bytes", .unit = U::Bytes,
       .help = "Bytes of the batch arena.", .stats = "arena_bytes"},
      {.id = M::ProducerBoundWaits, .name = "producer_bound_waits", .unit = U::Count,
       .help = "Consumer waits that more depth would not have fixed.",
       .stats = "producer_bound_waits"},
      {.id = M::StreamReads, .name = "stream_reads", .unit = U::Count,
       .help = "read() calls of a streamed source on shard files.", .stats = "reads",
       .group = "stream_reads"},
      {.id = M::StreamBytes, .name = "stream_bytes", .unit = U::Bytes,
       .help = "Bytes those reads returned (compressed bytes for .gz and .zst).",
       .stats = "bytes", .group = "stream_reads", .record = &R::stream_bytes},
      {.id = M::StreamLargest, .name = "stream_largest", .unit = U::Bytes,
       .help = "The largest single read of a shard file.", .stats = "largest",
       .group = "stream_reads"},
      {.id = M::NumaBound, .name = "numa_bound", .unit = U::Flag,
       .help = "The arena is bound to the plan's NUMA nodes.", .stats = "numa_bound"},
      {.id = M::Pinned, .name = "pinned", .unit = U::Flag,
       .help = "The arena is page-locked.", .stats = "pinned"},
      {.id = M::Adaptive, .name = "adaptive", .unit = U::Flag,
       .help = "The prefetch controller may move the depth.", .stats = "adaptive"},
  };
}

}  // namespace

const std::vector<MeasureRow>& run_measures() {
  static const std::vector<MeasureRow> table = rows();
  return table;
}

const MeasureRow& measure_row(Measure id) {
  for (const MeasureRow& row : run_measures()) {
    if (row.id == id) return row;
  }
  throw std::logic_error("a Measure without its row in run_measures()");
}

}  // namespace stoker
