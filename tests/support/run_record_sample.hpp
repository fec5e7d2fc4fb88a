// A run record with every field set (record/run_record.hpp), for the tests that read records
// back and the benchmark of the plugin's collection.
#pragma once

#include "stoker/record/run_record.hpp"

namespace stoker::test {

inline RunRecord sample_run_record() {
  RunRecord r;
  r.job = "4242";
  r.step = "0";
  r.node = "n1";
  r.rank = 3;
  r.plan.profile = "cv";
  r.plan.cpus = CpuSet::range(0, 5);
  r.plan.workers = r.workers = 4;
  r.plan.prefetch = 8;
  r.plan.prefetch_max = r.prefetch_max = 16;
  r.plan.pin_memory = true;
  r.plan.mem_budget = r.mem_budget = 1 << 30;
  r.slot_bytes = 1 << 24;
  r.budget_depth = 62;
  r.prefetch_max_reason = "room to grow: 2 x prefetch 8, lowered to MaxPrefetch=16";
  r.samples = 38400;
  r.batches = 1200;
  r.seconds = 60.25;
  r.samples_per_s = 637.3;
  r.wait_share = 0.41;
  r.depth_reached = 16;
  r.at_max_share = 0.71;
  r.skipped = 2;
  r.stream_bytes = 123456789;
  r.end = "close";
  r.timeline = {{1.0, 0.5, 8}, {2.0, 0.25, 16}};
  return r;
}

}  // namespace stoker::test
