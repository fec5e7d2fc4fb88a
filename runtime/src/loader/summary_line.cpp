// The one line per rank printed at exit under --stoker-verbose.
#include <cstdio>

#include "stoker/common/launch_env.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/plan/plan_env.hpp"

namespace stoker {

std::string summary_line(const LoaderStats& s, uint64_t rank) {
  const double wall = static_cast<double>(s.wall_ns) / 1e9;
  auto sec = [](uint64_t ns) { return static_cast<double>(ns) / 1e9; };
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "stoker rank %llu: %llu batches, %llu samples in %.1f s (%.0f samples/s, "
                "%.3f GB/s), waited %.1f %% of the time, depth %d/%d, %d workers; worker s: "
                "read %.1f decode %.1f transform %.1f collate %.1f",
                static_cast<unsigned long long>(rank), static_cast<unsigned long long>(s.batches),
                static_cast<unsigned long long>(s.samples), wall,
                wall > 0 ? static_cast<double>(s.samples) / wall : 0.0,
                wall > 0 ? static_cast<double>(s.bytes) / wall / 1e9 : 0.0, 100 * s.wait_share,
                s.depth, s.max_depth, s.workers, sec(s.stages.read_ns), sec(s.stages.decode_ns),
                sec(s.stages.transform_ns), sec(s.stages.collate_ns));
  std::string line = buf;
  if (s.skipped) line += "; skipped " + std::to_string(s.skipped) + " corrupt";
  return line;
}

bool verbose_from_environment() {
  return process_env()(kVerboseVar) == "1";
}

}  // namespace stoker
