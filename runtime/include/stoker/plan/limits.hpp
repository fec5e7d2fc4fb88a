// The documented ranges of every knob and the one default prefetch depth. The profiles
// parser, the user flags (and so the plugin), check_profile, the planner, the STOKER_*
// reader (plan_env), the loader and the Python module (stoker.limits, through the
// binding) all take them from here, so each input accepts the same values.
//
// Header only: constants.
#pragma once

#include <cstdint>

namespace stoker::limits {

inline constexpr int kMaxMainCores = 64;
inline constexpr int kMaxPrefetchPerWorker = 64;
// Whole-rank depths, in batches: --stoker-prefetch, MinPrefetch/MaxPrefetch, STOKER_PREFETCH,
// STOKER_PREFETCH_MAX, LoaderOptions::prefetch/max_depth/held_batches.
inline constexpr int kMaxPrefetch = 4096;
inline constexpr int kMaxWorkers = 1024;  // also bounds MaxReaders and STOKER_WORKERS
// Threads a loader may start besides its workers (the stream reader, the metrics writer):
// the planner keeps them out of the workers' share of a thread limit.
inline constexpr uint64_t kThreadsBesideWorkers = 2;
// Samples a streamed source holds to shuffle: ShuffleBuffer, LoaderOptions::shuffle_buffer.
inline constexpr int64_t kMaxShuffleBuffer = int64_t{1} << 24;
// The depth a Plan starts with before the planner decides (and the default of
// ControllerConfig): a batch in use and one being made.
inline constexpr int kDefaultPrefetch = 2;
// When the memory limit is unknown (0), the planner assumes this much per rank.
inline constexpr uint64_t kAssumedMemLimit = uint64_t{1} << 30;

}  // namespace stoker::limits
