// How a set of index lists (every rank's shard, over one or more resumed phases) covers
// a dataset of n samples. Shared by the unit tests and the MPI checker.
#pragma once

#include <cstdint>
#include <vector>

namespace stoker::testing {

struct Coverage {
  uint64_t total = 0;     // indices in all lists
  uint64_t missing = 0;   // dataset indices never seen
  uint64_t repeated = 0;  // sum over indices of (times seen - 1)
  uint64_t outside = 0;   // indices >= n
};

inline Coverage coverage(const std::vector<std::vector<uint64_t>>& lists, uint64_t n) {
  Coverage c;
  std::vector<uint32_t> seen(n, 0);
  for (const auto& list : lists) {
    for (uint64_t v : list) {
      ++c.total;
      if (v >= n) {
        ++c.outside;
      } else if (seen[v]++ > 0) {
        ++c.repeated;
      }
    }
  }
  for (uint32_t s : seen) c.missing += s == 0;
  return c;
}

}  // namespace stoker::testing
