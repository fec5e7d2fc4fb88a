// The prefetch controller: decides the ring depth (batches in flight) online.
// It is a pure model with no threads and no clock of its own: the loader feeds it one
// observation per delivered batch and applies the depth it returns. Keeping the model
// apart from the mechanism (as tf.data does) lets the rules be tested in isolation.
//
// It takes its bounds as they are: the loader passes the plan's prefetch as both the
// initial and the minimum depth and the plan's prefetch_max as the maximum, which the
// planner already fitted to the memory budget (fit_prefetch). Equal bounds fix the depth.
//
// Rules (runtime/README.md, "The prefetch ring", says them for users):
//  - start at the initial depth;
//  - raise by one when the consumer waited for a batch AND the producers had filled the
//    ring to its depth on at least half of the batches since the last change (a deeper
//    ring only helps when the producers can get ahead, i.e. their speed varies; when they
//    rarely can, the job is producer-bound and more depth only costs memory), never
//    beyond max_depth;
//  - after a raise, wait `depth` batches before judging again (the new slot must fill);
//  - lower by one after `calm_batches` consecutive batches without a wait, never below
//    min_depth.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/common/enum_names.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

// 1 <= min_depth <= initial_depth <= max_depth <= limits::kMaxPrefetch.
struct ControllerConfig {
  int initial_depth = limits::kDefaultPrefetch;
  int min_depth = 1;
  int max_depth = limits::kDefaultPrefetch;
  // A wait counts when it is at least min_wait_ns or half a batch's production time,
  // whichever is shorter: shorter waits are scheduling noise, not starvation.
  uint64_t min_wait_ns = 50'000;
  int calm_batches = 64;  // batches without a wait before the depth is lowered
};

// What happened for one delivered batch.
struct PrefetchObservation {
  uint64_t now_ns = 0;       // a monotonic time stamp (for the history)
  uint64_t wait_ns = 0;      // how long the consumer blocked for this batch
  uint64_t produce_ns = 0;   // how long a worker took to make it
  int ready = 0;             // batches ready in the ring when the consumer asked
  bool ring_filled = false;  // producers hit the depth limit since the last observation
};

enum class DepthReason { Start, ConsumerWaited, NeverWaited };
inline constexpr EnumName<DepthReason> kDepthReasonNames[] = {
    {DepthReason::Start, "start"},
    {DepthReason::ConsumerWaited, "consumer waited"},
    {DepthReason::NeverWaited, "consumer never waited"}};
inline const char* to_string(DepthReason r) {
  return name_of(kDepthReasonNames, r);
}

struct DepthChange {
  uint64_t time_ns = 0;  // the observation's now_ns
  uint64_t batch = 0;    // observations seen before this change
  int from = 0, to = 0;
  DepthReason reason = DepthReason::Start;
  uint64_t wait_ns = 0;          // the wait that triggered a raise
  std::string describe() const;  // "batch 57: 4 -> 5 (consumer waited 1.20 ms)"
};

class PrefetchController {
 public:
  // Throws stoker::Error naming the depth when the bounds are out of order or range.
  explicit PrefetchController(const ControllerConfig& config, uint64_t start_ns = 0);

  // Feeds one observation; returns the depth to use from now on.
  int observe(const PrefetchObservation& obs);

  int depth() const { return depth_; }
  int max_depth() const { return config_.max_depth; }
  const ControllerConfig& config() const { return config_; }
  // Changes, oldest first (the Start entry included). Capacity is reserved up front so that
  // observe() never allocates; beyond kHistoryCapacity entries, changes are only counted.
  const std::vector<DepthChange>& history() const { return history_; }
  uint64_t history_dropped() const { return dropped_; }
  // Batches on which the consumer waited but the producers had rarely filled the ring.
  uint64_t producer_bound_waits() const { return producer_bound_waits_; }

  static constexpr size_t kHistoryCapacity = 512;

 private:
  void change(const PrefetchObservation& obs, int to, DepthReason why);

  ControllerConfig config_;
  int depth_ = 1;
  uint64_t observed_ = 0;
  uint64_t cooldown_ = 0;      // observations left before the next judgement
  uint64_t calm_streak_ = 0;   // consecutive observations without a wait
  uint64_t since_change_ = 0;  // observations since the last change
  uint64_t filled_ = 0;        // of which with ring_filled
  uint64_t dropped_ = 0, producer_bound_waits_ = 0;
  std::vector<DepthChange> history_;
};

}  // namespace stoker
