// What a run record holds, as plain data: who ran, the plan it ran and what then happened.
// Apart from its reader and writer (run_record.hpp) because the table of what a run measures
// (run_measures.hpp) names the record's members, and the reader walks that table: both
// include this, neither the other.
//
// Header only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/plan/plan.hpp"

namespace stoker {

struct TimelinePoint {
  double t = 0;     // seconds from the first request to the point's end
  double wait = 0;  // the consumer's wait share within the point (0..1)
  int depth = 0;    // the deepest ring within the point
  bool operator==(const TimelinePoint&) const = default;
};

struct RunRecord {
  // 2: the plan as its STOKER_* variables ("plan"); 1 (still read): twelve plan fields by
  // hand, some under other names ("pin" for pin_memory).
  static constexpr int kVersion = 2;
  // Who.
  std::string job, step, node;
  uint64_t rank = 0;
  // The plan it ran: written as plan_to_env() writes it, read back with the strict
  // read_plan(). Its reasons are not kept but the one below.
  Plan plan;
  std::string prefetch_max_reason;  // the planner's reason for prefetch_max
  // What happened: the run_measures() rows with a record member, under their names.
  int workers = 0, prefetch_max = 0;  // as the loader ran them (a fit may lower the plan's)
  uint64_t mem_budget = 0, slot_bytes = 0;
  int budget_depth = 0;  // the deepest ring the memory budget holds
  uint64_t samples = 0, batches = 0;
  double seconds = 0, samples_per_s = 0, wait_share = 0;
  int depth_reached = 0;
  double at_max_share = 0;  // share of the run with the ring at prefetch_max
  uint64_t skipped = 0, stream_bytes = 0;
  std::optional<uint64_t> decode_warnings;  // absent in records written before it was counted
  std::string end;                          // "close", "exit" or "sigterm"
  std::vector<TimelinePoint> timeline;

  int cores() const { return plan.cpus.count(); }
  bool operator==(const RunRecord&) const = default;
};

}  // namespace stoker
