// Topology's queries: plain lookups over the converted data, no hwloc calls.
#include <algorithm>

#include "stoker/topology/topology.hpp"

namespace stoker {

const NumaNode* Topology::numa_by_os_index(int os_index) const {
  for (const NumaNode& n : numa_nodes) {
    if (n.os_index == os_index) return &n;
  }
  return nullptr;
}

int64_t Topology::numa_distance(int from_os, int to_os) const {
  int from = -1, to = -1;
  for (size_t i = 0; i < numa_nodes.size(); ++i) {
    if (numa_nodes[i].os_index == from_os) from = static_cast<int>(i);
    if (numa_nodes[i].os_index == to_os) to = static_cast<int>(i);
  }
  if (from < 0 || to < 0 || static_cast<size_t>(from) >= numa_distances.size() ||
      static_cast<size_t>(to) >= numa_distances[from].size()) {
    return -1;
  }
  uint64_t d = numa_distances[from][to];
  return d == 0 ? -1 : static_cast<int64_t>(d);  // 0 marks a pair the matrix does not cover
}

int Topology::smt_width() const {
  int width = 1;
  for (const Core& c : cores) width = std::max(width, c.pus.count());
  return width;
}

}  // namespace stoker
