// What the loader reports about itself: where time goes, whether the consumer starved,
// and what the prefetch controller decided.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/loader/prefetch_controller.hpp"
#include "stoker/loader/run_timeline.hpp"
#include "stoker/sources/shard_stream.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

struct EpochFirstBatch {
  uint64_t epoch = 0;
  uint64_t wait_ns = 0;  // how long the consumer blocked for the epoch's first batch
};

struct LoaderStats {
  StageTimes stages;              // summed over the workers (read, decode, transform, collate)
  uint64_t produce_ns = 0;        // worker time spent making delivered batches
  uint64_t consumer_wait_ns = 0;  // time the consumer blocked in next()
  uint64_t wall_ns = 0;           // since the first batch was asked for
  double wait_share = 0;          // consumer_wait_ns / wall_ns: the share of time starved
  uint64_t samples = 0, batches = 0, bytes = 0;  // delivered (bytes: sample data only)
  uint64_t skipped = 0;                          // corrupt samples left out (on_corrupt = Skip)
  std::vector<std::string> skipped_files;        // their files, each once, the first 1000
  uint64_t decode_warnings = 0;    // samples delivered although their decoder warned (as PIL)
  uint64_t discarded_batches = 0;  // prepared for an epoch that was not iterated after all
  ReadCounters stream_reads;       // a streamed source's reads of shard files (else zeros)

  int workers = 0;
  uint64_t threads_created = 0;  // stays equal to `workers`: epochs never create threads
  int depth = 0;                 // current ring depth (batches in flight)
  int max_depth = 0;             // what the memory budget allows
  int slots = 0;                 // batch slots in the arena (max_depth + consumer-held)
  uint64_t slot_bytes = 0, arena_bytes = 0, mem_budget = 0;
  bool numa_bound = false;  // arena bound to the plan's NUMA nodes
  bool pinned = false;      // arena page-locked by the HostPinner
  bool adaptive = true;

  std::vector<DepthChange> depth_history;  // controller decisions, oldest first
  RunTimeline timeline;  // wait share and depth over time, fixed size (the run record's)
  uint64_t producer_bound_waits = 0;               // waits that more depth would not have fixed
  std::vector<EpochFirstBatch> epoch_first_batch;  // one per epoch iterated
  std::vector<std::string> notes;                  // binding/pinning fallbacks, one line each
  std::string agreement;  // what checks the ranks' epochs: agreement_mode()'s answer

  std::string summary() const;  // a few human-readable lines
};

}  // namespace stoker
