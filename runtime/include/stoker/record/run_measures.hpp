// The one table of what a run measures, as plan_fields.hpp is for the Plan: every quantity
// the loader reports, with its one name, its unit, its key in Python's stats(), its
// Prometheus series, its place in the run record and how `stoker report` shows it. The
// writers walk it: the Prometheus text (loader/prometheus_text.cpp), stats()
// (python/src/stats_dict.cpp), the run record (record/run_record.cpp reads and writes its
// measured part, loader/run_recorder.cpp fills it) and the report's JSON.
//
// Here, in the record room, because the run record's reader is here (the plugin reads records
// and may include rooms 1-4 only). The values themselves come from the loader's stats:
// measure_value() (stoker/loader/measure_values.hpp), one case per Measure.
//
// A new quantity: its Measure, its row in run_measures() (run_measures.cpp), its case in
// measure_value() (the compiler asks for it) and, when the record keeps it, its RunRecord
// member. tests/unit/loader/measure_values_test.cpp checks every row against every writer.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "stoker/record/run_record_data.hpp"

namespace stoker {

enum class Measure {
  Samples,
  Batches,
  Bytes,
  Skipped,
  DecodeWarnings,
  DiscardedBatches,
  SamplesPerSecond,
  BytesPerSecond,
  Wall,
  ConsumerWait,
  WaitShare,
  Depth,
  PrefetchMax,
  DepthReached,
  AtMaxShare,
  BudgetDepth,
  Workers,
  ThreadsCreated,
  Slots,
  SlotBytes,
  ArenaBytes,
  MemBudget,
  StageRead,
  StageDecode,
  StageTransform,
  StageCollate,
  Produce,
  ProducerBoundWaits,
  StreamReads,
  StreamBytes,
  StreamLargest,
  NumaBound,
  Pinned,
  Adaptive,
};

// What a value counts. Nanoseconds are whole in stats() (`..._ns`) and seconds everywhere
// else (Prometheus's base unit, the record).
enum class MeasureUnit { Count, Batches, Bytes, Nanoseconds, Ratio, PerSecond, Flag };

// The record member a measured value lands in (monostate: the record leaves it out).
using RecordMember = std::variant<std::monostate, uint64_t RunRecord::*, int RunRecord::*,
                                  double RunRecord::*, std::optional<uint64_t> RunRecord::*>;

struct MeasureRow {
  Measure id;
  const char* name;  // the one spelling: the run record's key, and stats()'s unless stats says
  MeasureUnit unit;
  const char* help;  // one sentence: Prometheus's HELP, the docs
  // stats(): its key (nullptr: not there), within the dict `group` when set ("stages").
  const char* stats = nullptr;
  const char* group = nullptr;
  // Prometheus: the series (nullptr: not exported), "counter" or "gauge", and a label pair
  // of its own ("stage=\"read\"") when several rows share one series.
  const char* prom = nullptr;
  const char* prom_type = nullptr;
  const char* prom_label = nullptr;
  RecordMember record = {};
  double record_max = 0;  // a number member's upper bound when read (the reader's range)
  // How `stoker report` shows it ("the steps table's input wait"); nullptr: only in --json.
  const char* report = nullptr;
  // The name this quantity had before, still written for one release (docs/admin-guide.md,
  // "Renamed").
  const char* old_stats = nullptr;
};

// Every quantity, Prometheus's series in the order they are written.
const std::vector<MeasureRow>& run_measures();
const MeasureRow& measure_row(Measure id);

}  // namespace stoker
