// The documented ranges of every knob, shared by the profiles parser, the user flags,
// check_profile and the planner's clamping, so each input accepts the same values.
#pragma once

#include <cstdint>

namespace stoker::limits {

inline constexpr int kMaxMainCores = 64;
inline constexpr int kMaxPrefetchPerWorker = 64;
inline constexpr int kMaxPrefetch = 4096;  // whole-rank depth, batches
inline constexpr int kMaxWorkers = 1024;   // also bounds MaxReaders
inline constexpr int64_t kMaxShuffleBuffer = int64_t{1} << 24;  // samples (ShuffleBuffer)
// When the memory limit is unknown (0), the planner assumes this much per rank.
inline constexpr uint64_t kAssumedMemLimit = uint64_t{1} << 30;

}  // namespace stoker::limits
