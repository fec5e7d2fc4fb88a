#include "plan/core_units.hpp"

#include <algorithm>
#include <limits>

namespace stoker::planner {

namespace {

int package_of_node(const Topology& topo, int node) {
  const NumaNode* n = topo.numa_by_os_index(node);
  return n ? n->package : -1;
}

}  // namespace

std::string list_text(const std::vector<int>& v) {
  std::vector<int> nonneg;
  for (int x : v)
    if (x >= 0) nonneg.push_back(x);
  return nonneg.empty() ? "?" : CpuSet::from_list(nonneg).to_string();
}

std::string plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

CpuSet pus_of(const std::vector<Unit>& units, const std::vector<int>& list) {
  CpuSet out;
  for (int u : list) out = out | units[u].pus;
  return out;
}

std::vector<int> unit_nodes(const std::vector<Unit>& units, const std::vector<int>& list) {
  std::vector<int> out;
  for (int u : list)
    if (!contains(out, units[u].numa)) out.push_back(units[u].numa);
  std::sort(out.begin(), out.end());
  return out;
}

NodeKey node_key(const Topology& topo, const std::vector<int>& home, int node) {
  if (home.empty()) return {0, 0, 0};  // no GPU: no node is nearer than another
  if (contains(home, node)) return {-1, 0, node};
  int64_t best = -1;
  bool same_package = false;
  for (int h : home) {
    int64_t d = topo.numa_distance(h, node);
    if (d >= 0 && (best < 0 || d < best)) best = d;
    int pkg = package_of_node(topo, h);
    same_package = same_package || (pkg >= 0 && pkg == package_of_node(topo, node));
  }
  return {best >= 0 ? best : std::numeric_limits<int64_t>::max(), same_package ? 0 : 1, node};
}

std::vector<int> gpu_numa_nodes(const Topology& topo, int gpu) {
  if (gpu < 0 || gpu >= static_cast<int>(topo.gpus.size())) return {};
  const Gpu& g = topo.gpus[gpu];
  std::vector<int> nodes = g.numa;
  if (nodes.empty())
    for (const NumaNode& n : topo.numa_nodes)
      if (n.cpus.intersects(g.local_cpus)) nodes.push_back(n.os_index);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::vector<Unit> make_units(const Topology& topo, const CpuSet& allowed, bool smt_as_cores) {
  std::vector<const Core*> cores;
  for (const Core& c : topo.cores) cores.push_back(&c);
  // hwloc's logical order is package, NUMA node, core; OS numbering may interleave.
  std::stable_sort(cores.begin(), cores.end(), [](const Core* a, const Core* b) {
    return std::make_tuple(a->logical_index, a->pus.first()) <
           std::make_tuple(b->logical_index, b->pus.first());
  });
  std::vector<Unit> units;
  CpuSet covered;
  auto add = [&](const CpuSet& pus, int numa) {
    if (pus.empty()) return;
    if (smt_as_cores)
      for (int pu : pus.list()) units.push_back({CpuSet::from_list({pu}), numa});
    else
      units.push_back({pus, numa});
    covered = covered | pus;
  };
  for (const Core* c : cores) add(c->pus & (allowed - covered), c->numa);
  // Allowed PUs that no core lists (hand-made or odd topologies): one unit each.
  for (int pu : (allowed - covered).list()) {
    int numa = -1;
    for (const NumaNode& n : topo.numa_nodes)
      if (n.cpus.test(pu)) numa = n.os_index;
    add(CpuSet::from_list({pu}), numa);
  }
  return units;
}

}  // namespace stoker::planner
