#include "stoker/record/run_advice.hpp"

#include <cmath>
#include <string>

namespace stoker {

namespace {

std::string pct(double share) {
  return std::to_string(static_cast<int>(std::lround(100 * share))) + " %";
}

std::string in_profile(const RunRecord& r) {
  return r.plan.profile.empty() ? "in the profile" : "in profile " + r.plan.profile;
}

bool contains(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

}  // namespace

RunAdvice advise(const RunRecord& r) {
  const std::string wait = pct(r.wait_share) + " wait";
  const std::string cores =
      std::to_string(r.workers) + " workers on " + std::to_string(r.cores()) + " cores, " + wait;
  // First, starved or not: more threads than cores only take turns and hold memory (each
  // its share of the ring), and a deeper ring cannot help them.
  if (r.cores() > 0 && r.workers > r.cores())
    return {Advice::TooManyWorkers, cores +
                                        ": more workers than cores only take turns; let the "
                                        "plan size the workers (drop a copied setting)"};
  if (r.wait_share < kStarvedShare)
    return {Advice::None, "waited " + pct(r.wait_share) + ": no change"};
  if (r.at_max_share >= kSatAtMaxShare) {
    const std::string sat = "depth sat at prefetch_max " + std::to_string(r.prefetch_max) +
                            " for " + pct(r.at_max_share) + " of the run, " + wait;
    const bool room = r.budget_depth > r.prefetch_max;
    const std::string allows = "the budget allows " + std::to_string(r.budget_depth);
    if (contains(r.prefetch_max_reason, "requested"))
      return {Advice::UserFixedDepth,
              sat +
                  ": the depth was fixed by --stoker-prefetch; drop it (the plan then grows "
                  "the depth) or ask for more" +
                  (room ? " (" + allows + ")" : "")};
    if (room && contains(r.prefetch_max_reason, "MaxPrefetch"))
      return {Advice::RaiseMaxPrefetch,
              sat + ": " + allows + "; raise MaxPrefetch " + in_profile(r)};
    if (room)
      return {Advice::RaisePrefetchPerWorker,
              sat + ": " + allows + "; raise PrefetchPerWorker " + in_profile(r)};
    return {Advice::MoreMemory, sat + ", all the memory budget holds: raise MemShare " +
                                    in_profile(r) + " or ask for more memory (--mem)"};
  }
  if (r.workers + 1 < r.cores())
    return {Advice::RaiseWorkerFraction, cores + ": raise WorkerFraction " + in_profile(r)};
  return {Advice::MoreCores, cores + ": ask for more cores per GPU (--cpus-per-task)"};
}

std::string verdict_line(const RunRecord& worst) {
  return "stoker: job " + worst.job + " rank " + std::to_string(worst.rank) + " waited " +
         pct(worst.wait_share) + " for input: " + advise(worst).text;
}

}  // namespace stoker
