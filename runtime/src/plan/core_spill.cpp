#include "plan/core_spill.hpp"

#include <algorithm>
#include <limits>

namespace stoker::planner {

std::vector<std::vector<int>> spill_units(const Topology& topo, const std::vector<Unit>& units,
                                          const std::vector<int>& free,
                                          const std::vector<SpillTaker>& takers) {
  std::vector<std::vector<int>> out(takers.size());
  if (takers.empty()) return out;
  // The free units by the set of takers nearest them, in order of first appearance.
  std::vector<std::pair<std::vector<size_t>, std::vector<int>>> pools;
  for (int u : free) {
    std::vector<size_t> nearest;
    NodeKey best{};
    for (size_t t = 0; t < takers.size(); ++t) {
      const NodeKey k = node_key(topo, takers[t].home, units[u].numa);
      if (nearest.empty() || k < best) {
        nearest = {t};
        best = k;
      } else if (k == best) {
        nearest.push_back(t);
      }
    }
    auto it =
        std::find_if(pools.begin(), pools.end(), [&](const auto& p) { return p.first == nearest; });
    if (it == pools.end())
      pools.push_back({nearest, {u}});
    else
      it->second.push_back(u);
  }
  std::vector<int> have(takers.size());
  for (size_t t = 0; t < takers.size(); ++t) have[t] = takers[t].have;
  for (const auto& [nearest, pool] : pools) {
    // Water-filling: one unit at a time to the taker with the fewest, ties by rank.
    std::vector<int> quota(takers.size(), 0);
    for (size_t i = 0; i < pool.size(); ++i) {
      size_t pick = nearest.front();
      for (size_t t : nearest)
        if (std::make_pair(have[t], takers[t].rank) < std::make_pair(have[pick], takers[pick].rank))
          pick = t;
      ++quota[pick];
      ++have[pick];
    }
    // Contiguous runs of the pool, in rank order.
    std::vector<size_t> order = nearest;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return takers[a].rank < takers[b].rank; });
    size_t next = 0;
    for (size_t t : order)
      for (int k = 0; k < quota[t]; ++k) out[t].push_back(pool[next++]);
  }
  return out;
}

std::string spill_nearness(const Topology& topo, const std::vector<int>& home, int node) {
  const NodeKey k = node_key(topo, home, node);
  if (std::get<0>(k) != std::numeric_limits<int64_t>::max())
    return "hwloc distance " + std::to_string(std::get<0>(k));
  return std::get<1>(k) == 0 ? "same package" : "another package";
}

std::string spill_reason(const Topology& topo, const std::vector<Unit>& units,
                         const std::vector<int>& mine, const std::vector<int>& home,
                         const std::vector<int>& spilled, const std::vector<int>& idle) {
  if (!idle.empty())
    return "SpillCores=no: the " + plural(idle.size(), "allowed core") + " of NUMA node " +
           list_text(unit_nodes(units, idle)) + " (" + pus_of(units, idle).to_string() +
           "), where no local rank has its GPU, stay idle";
  if (spilled.empty()) return "";
  const std::string all = "the " + plural(spilled.size(), "allowed core") + " of NUMA node " +
                          list_text(unit_nodes(units, spilled)) +
                          ", where no local rank has its GPU, go to the nearest ranks as worker "
                          "cores (SpillCores=yes)";
  if (mine.empty()) return all + "; none to this rank";
  const std::vector<int> nodes = unit_nodes(units, mine);
  return all + "; this rank has " + plural(mine.size(), "core") + ", " +
         pus_of(units, mine).to_string() + " (NUMA node " + list_text(nodes) + ", " +
         spill_nearness(topo, home, nodes.front()) +
         "), for workers only: its training loop, memory and pinned arena stay on NUMA node " +
         list_text(home);
}

}  // namespace stoker::planner
