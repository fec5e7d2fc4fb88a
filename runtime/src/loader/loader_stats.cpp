#include <cstdio>

#include "stoker/loader/loader_stats.hpp"

namespace stoker {

std::string LoaderStats::summary() const {
  auto ms = [](uint64_t ns) { return ns / 1e6; };
  char buf[512];
  std::string out;
  const double secs = wall_ns / 1e9;
  std::snprintf(buf, sizeof buf,
                "delivered %llu batches, %llu samples, %.1f MB in %.3f s (%.1f samples/s, "
                "%.3f GB/s); skipped %llu\n",
                static_cast<unsigned long long>(batches), static_cast<unsigned long long>(samples),
                bytes / 1e6, secs, secs > 0 ? samples / secs : 0.0,
                secs > 0 ? bytes / secs / 1e9 : 0.0, static_cast<unsigned long long>(skipped));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "worker time (ms): read %.1f, decode %.1f, transform %.1f, collate %.1f, "
                "batch total %.1f; consumer wait %.1f ms (%.1f %% of wall)\n",
                ms(stages.read_ns), ms(stages.decode_ns), ms(stages.transform_ns),
                ms(stages.collate_ns), ms(produce_ns), ms(consumer_wait_ns), 100 * wait_share);
  out += buf;
  std::snprintf(buf, sizeof buf,
                "%d workers (%llu threads created), depth %d (max %d by budget %llu bytes), "
                "%d slots of %llu bytes, NUMA-bound %s, pinned %s, adaptive %s\n",
                workers, static_cast<unsigned long long>(threads_created), depth, max_depth,
                static_cast<unsigned long long>(mem_budget), slots,
                static_cast<unsigned long long>(slot_bytes), numa_bound ? "yes" : "no",
                pinned ? "yes" : "no", adaptive ? "yes" : "no");
  out += buf;
  for (const EpochFirstBatch& e : epoch_first_batch) {
    std::snprintf(buf, sizeof buf, "epoch %llu first batch wait: %.3f ms\n",
                  static_cast<unsigned long long>(e.epoch), ms(e.wait_ns));
    out += buf;
  }
  for (const DepthChange& c : depth_history) out += "depth " + c.describe() + "\n";
  for (const std::string& n : notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace stoker
