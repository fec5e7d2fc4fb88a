#include "plan/core_assignment.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace stoker::planner {

namespace {

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string list_text(const std::vector<int>& v) {
  std::vector<int> nonneg;
  for (int x : v)
    if (x >= 0) nonneg.push_back(x);
  return nonneg.empty() ? "?" : CpuSet::from_list(nonneg).to_string();
}

int package_of_node(const Topology& topo, int node) {
  const NumaNode* n = topo.numa_by_os_index(node);
  return n ? n->package : -1;
}

// How far `node` is from a group's home nodes: hwloc distance when known, else
// "same package" before "other package"; ties by node number. Home nodes first.
using NodeKey = std::tuple<int64_t, int, int>;
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

std::string nearness(const NodeKey& key) {
  if (std::get<0>(key) != std::numeric_limits<int64_t>::max())
    return "hwloc distance " + std::to_string(std::get<0>(key));
  return std::get<1>(key) == 0 ? "no hwloc distances: same package"
                               : "no hwloc distances: lowest node number";
}

struct Group {
  std::vector<int> home;     // GPU NUMA nodes; empty for the ranks without GPU
  std::vector<int> members;  // local ranks, ascending
  std::string note;          // fallback and borrowing, for the reason
};

class Assignment {
 public:
  Assignment(const Topology& topo, const std::vector<Unit>& units, std::vector<Group> groups)
      : topo_(topo), units_(units), groups_(std::move(groups)), owner_(units.size(), -1) {}

  const std::vector<Group>& groups() const { return groups_; }

  void run() {
    for (size_t g = 0; g < groups_.size(); ++g)
      if (!groups_[g].home.empty()) claim_home(g);
    for (size_t g = 0; g < groups_.size(); ++g)
      if (!groups_[g].home.empty() && count(g) == 0) fall_back(g);
    bool enough = units_.size() >= members_total();
    if (enough)
      for (size_t g = 0; g < groups_.size(); ++g)
        if (!groups_[g].home.empty()) borrow(g, /*from_groups=*/false);
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].home.empty())
        for (size_t u = 0; u < units_.size(); ++u)
          if (owner_[u] < 0) owner_[u] = static_cast<int>(g);
    if (enough)
      for (size_t g = 0; g < groups_.size(); ++g) borrow(g, /*from_groups=*/true);
  }

  // The group's units, home nodes first, then by topology order.
  std::vector<int> units_of(size_t g) const {
    std::vector<int> out;
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] == static_cast<int>(g)) out.push_back(static_cast<int>(u));
    std::stable_sort(out.begin(), out.end(),
                     [&](int a, int b) { return key(g, units_[a].numa) < key(g, units_[b].numa); });
    return out;
  }

 private:
  NodeKey key(size_t g, int node) const { return node_key(topo_, groups_[g].home, node); }
  size_t members_total() const {
    size_t n = 0;
    for (const auto& g : groups_) n += g.members.size();
    return n;
  }
  size_t count(size_t g) const {
    return static_cast<size_t>(std::count(owner_.begin(), owner_.end(), static_cast<int>(g)));
  }

  void claim_home(size_t g) {
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && contains(groups_[g].home, units_[u].numa))
        owner_[u] = static_cast<int>(g);
  }

  // The GPU's node has no allowed (unclaimed) cores: take the nearest node that has.
  void fall_back(size_t g) {
    int best = -2;
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && (best == -2 || key(g, units_[u].numa) < key(g, best)))
        best = units_[u].numa;
    if (best == -2) return;  // nothing unclaimed: borrowing below takes from surplus groups
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && units_[u].numa == best) owner_[u] = static_cast<int>(g);
    groups_[g].note = "; its node has no allowed cores, so the nearest node with some, " +
                      list_text({best}) + " (" + nearness(key(g, best)) + "), is used";
  }

  // Gives group g one unit per member at least: from unclaimed units, or from groups
  // with more units than members: nearest node first, then the donor with the most to
  // spare, then the last unit in topology order.
  void borrow(size_t g, bool from_groups) {
    std::vector<int> nodes;
    while (count(g) < groups_[g].members.size()) {
      int pick = -1;
      std::tuple<NodeKey, int64_t> best;
      for (size_t u = 0; u < units_.size(); ++u) {
        int o = owner_[u];
        int64_t spare = o < 0 ? 0
                              : static_cast<int64_t>(count(o)) -
                                    static_cast<int64_t>(groups_[o].members.size());
        bool eligible = from_groups ? (o >= 0 && o != static_cast<int>(g) && spare > 0) : o < 0;
        if (!eligible) continue;
        auto rank = std::make_tuple(key(g, units_[u].numa), -spare);
        if (pick < 0 || rank <= best) {
          pick = static_cast<int>(u);
          best = rank;
        }
      }
      if (pick < 0) return;
      owner_[pick] = static_cast<int>(g);
      if (!contains(nodes, units_[pick].numa)) nodes.push_back(units_[pick].numa);
    }
    if (!nodes.empty())
      groups_[g].note +=
          "; cores of NUMA node " + list_text(nodes) + " added so that each of its ranks has one";
  }

  const Topology& topo_;
  const std::vector<Unit>& units_;
  std::vector<Group> groups_;
  std::vector<int> owner_;  // unit -> group, -1 unclaimed
};

std::vector<Group> make_groups(const Topology& topo, int local_size, const std::vector<int>& gpus,
                               BindMode bind) {
  std::vector<Group> groups;
  Group cpu_only;
  for (int r = 0; r < local_size; ++r) {
    int gpu = (bind == BindMode::GpuNuma && r < static_cast<int>(gpus.size())) ? gpus[r] : -1;
    std::vector<int> home = gpu >= 0 ? gpu_numa_nodes(topo, gpu) : std::vector<int>{};
    if (home.empty()) {
      cpu_only.members.push_back(r);
      continue;
    }
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.home == home; });
    if (it == groups.end())
      groups.push_back({home, {r}, ""});
    else
      it->members.push_back(r);
  }
  if (!cpu_only.members.empty()) groups.push_back(std::move(cpu_only));
  return groups;
}

}  // namespace

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

RankCores assign_cores(const Topology& topo, const std::vector<Unit>& units, int local_rank,
                       int local_size, const std::vector<int>& gpus, BindMode bind) {
  RankCores out;
  int my_gpu = local_rank < static_cast<int>(gpus.size()) ? gpus[local_rank] : -1;
  out.gpu_nodes = gpu_numa_nodes(topo, my_gpu);
  const int n = static_cast<int>(units.size());
  const std::string total = std::to_string(n) + " allowed core" + (n == 1 ? "" : "s");
  if (n == 0) {
    out.reason = "no allowed cores";
    return out;
  }
  if (bind == BindMode::None) {
    out.units = units;
    out.share_units = std::max(1, n / std::max(1, local_size));
    out.reason = "bind=none: the whole mask (" + total + "), nothing bound; workers sized on " +
                 std::to_string(out.share_units) + " core(s), an even share among " +
                 std::to_string(local_size) + " local rank(s)";
    return out;
  }
  if (n < local_size) {
    out.units = {units[local_rank % n]};
    out.share_units = 1;
    out.reason = "only " + total + " for " + std::to_string(local_size) +
                 " local ranks: ranks share cores; this rank has core " +
                 out.units[0].pus.to_string();
    return out;
  }
  Assignment a(topo, units, make_groups(topo, local_size, gpus, bind));
  a.run();
  size_t g = 0;
  while (!contains(a.groups()[g].members, local_rank)) ++g;
  const Group& group = a.groups()[g];
  std::vector<int> mine = a.units_of(g);
  const int m = static_cast<int>(group.members.size());
  const int idx = static_cast<int>(
      std::find(group.members.begin(), group.members.end(), local_rank) - group.members.begin());
  const int have = static_cast<int>(mine.size());
  for (int i = idx * have / m; i < (idx + 1) * have / m; ++i) out.units.push_back(units[mine[i]]);
  out.share_units = static_cast<int>(out.units.size());

  std::string share = std::to_string(have) + " core" + (have == 1 ? "" : "s") + " for local rank" +
                      (m == 1 ? " " : "s ") + list_text(group.members) + "; this rank has " +
                      std::to_string(out.units.size());
  if (bind == BindMode::Even)
    out.reason = "bind=even: an even split of the " + total + ": " + share;
  else if (!group.home.empty())
    out.reason = "its GPU is near NUMA node " + list_text(group.home) + group.note + ": " + share;
  else if (a.groups().size() > 1)
    out.reason = "no GPU: an even split of the allowed cores away from the local ranks' GPUs" +
                 group.note + ": " + share;
  else
    out.reason = "no GPU: an even split of the " + total + ": " + share;
  return out;
}

}  // namespace stoker::planner
