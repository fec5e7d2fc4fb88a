// Where each measured quantity comes from: LoaderStats, or a figure derived from it.
#include "stoker/loader/measure_values.hpp"

#include <algorithm>

#include "stoker/plan/limits.hpp"

namespace stoker {

namespace {

uint64_t whole(int v) {
  return static_cast<uint64_t>(std::max(v, 0));
}

double per_second(uint64_t count, uint64_t wall_ns) {
  return wall_ns > 0 ? static_cast<double>(count) / (static_cast<double>(wall_ns) / 1e9) : 0.0;
}

// The deepest ring the memory budget holds beside the slots the consumer holds.
uint64_t budget_depth(const LoaderStats& s) {
  if (s.slot_bytes == 0 || s.mem_budget == 0) return 0;
  const uint64_t held = whole(s.slots - s.max_depth);
  const uint64_t fit = s.mem_budget / s.slot_bytes;
  return std::min<uint64_t>(fit > held ? fit - held : 0, limits::kMaxPrefetch);
}

}  // namespace

MeasureValue measure_value(const LoaderStats& s, Measure id) {
  switch (id) {
    case Measure::Samples:
      return s.samples;
    case Measure::Batches:
      return s.batches;
    case Measure::Bytes:
      return s.bytes;
    case Measure::Skipped:
      return s.skipped;
    case Measure::DecodeWarnings:
      return s.decode_warnings;
    case Measure::DiscardedBatches:
      return s.discarded_batches;
    case Measure::SamplesPerSecond:
      return per_second(s.samples, s.wall_ns);
    case Measure::BytesPerSecond:
      return per_second(s.bytes, s.wall_ns);
    case Measure::Wall:
      return s.wall_ns;
    case Measure::ConsumerWait:
      return s.consumer_wait_ns;
    case Measure::WaitShare:
      return std::clamp(s.wait_share, 0.0, 1.0);
    case Measure::Depth:
      return whole(s.depth);
    case Measure::PrefetchMax:
      return whole(s.max_depth);
    case Measure::DepthReached:
      return whole(std::max(s.timeline.deepest(), s.depth));
    case Measure::AtMaxShare:
      return s.wall_ns ? std::min(1.0, static_cast<double>(s.timeline.at_max_ns()) /
                                           static_cast<double>(s.wall_ns))
                       : 0.0;
    case Measure::BudgetDepth:
      return budget_depth(s);
    case Measure::Workers:
      return whole(s.workers);
    case Measure::ThreadsCreated:
      return s.threads_created;
    case Measure::Slots:
      return whole(s.slots);
    case Measure::SlotBytes:
      return s.slot_bytes;
    case Measure::ArenaBytes:
      return s.arena_bytes;
    case Measure::MemBudget:
      return s.mem_budget;
    case Measure::StageRead:
      return s.stages.read_ns;
    case Measure::StageDecode:
      return s.stages.decode_ns;
    case Measure::StageTransform:
      return s.stages.transform_ns;
    case Measure::StageCollate:
      return s.stages.collate_ns;
    case Measure::Produce:
      return s.produce_ns;
    case Measure::ProducerBoundWaits:
      return s.producer_bound_waits;
    case Measure::StreamReads:
      return s.stream_reads.reads;
    case Measure::StreamBytes:
      return s.stream_reads.bytes;
    case Measure::StreamLargest:
      return s.stream_reads.largest;
    case Measure::NumaBound:
      return s.numa_bound;
    case Measure::Pinned:
      return s.pinned;
    case Measure::Adaptive:
      return s.adaptive;
  }
  return uint64_t{0};  // not reached: every Measure has its case
}

MeasureValue base_value(const MeasureValue& v, MeasureUnit unit) {
  const uint64_t* n = std::get_if<uint64_t>(&v);
  if (n && unit == MeasureUnit::Nanoseconds) return static_cast<double>(*n) / 1e9;
  return v;
}

double measure_in_base_unit(const MeasureValue& v, MeasureUnit unit) {
  return std::visit([](auto x) { return static_cast<double>(x); }, base_value(v, unit));
}

}  // namespace stoker
