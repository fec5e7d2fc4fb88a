// What a run record says to change, in the planner's own terms: the profile keys
// (MaxPrefetch, PrefetchPerWorker, MemShare, WorkerFraction), the user's flags
// (--stoker-prefetch) and the job's request (--cpus-per-task, --mem). One owner for
// `stoker report`'s suggestions and the plugin's AdminComment verdict.
#pragma once

#include <string>

#include "stoker/record/run_record.hpp"

namespace stoker {

// Below this wait share a run is not starved: no change is suggested.
inline constexpr double kStarvedShare = 0.05;
// The ring "sat at" prefetch_max when it was there for at least this share of the run.
inline constexpr double kSatAtMaxShare = 0.3;

enum class Advice {
  None,
  UserFixedDepth,
  RaiseMaxPrefetch,
  RaisePrefetchPerWorker,
  MoreMemory,
  RaiseWorkerFraction,
  MoreCores,
  TooManyWorkers
};

struct RunAdvice {
  Advice kind = Advice::None;
  std::string text;  // one line: what the record shows, then the change
};

RunAdvice advise(const RunRecord& r);

// "stoker: job 42 rank 3 waited 41 % for input: <advice>" for the job's AdminComment.
std::string verdict_line(const RunRecord& worst);

}  // namespace stoker
