#include "plan/core_assignment.hpp"

#include <algorithm>
#include <limits>

#include "plan/core_spill.hpp"

namespace stoker::planner {

namespace {

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

// How a group holds a unit: as its own (its ranks' training loops may run there), or as a
// worker-only unit of another node, borrowed so that each of its ranks has a worker core of
// its own while the training loops stay on the GPU's node.
enum class Role { None, Home, Extra };

// One rank's cores, as indexes into the units.
struct Share {
  std::vector<int> home, extra, spilled;
};

class Assignment {
 public:
  Assignment(const Topology& topo, const std::vector<Unit>& units, std::vector<Group> groups,
             bool spill)
      : topo_(topo),
        units_(units),
        groups_(std::move(groups)),
        spill_(spill),
        owner_(units.size(), -1),
        role_(units.size(), Role::None) {}

  const std::vector<Group>& groups() const { return groups_; }
  const std::vector<int>& idle() const { return idle_; }  // free units SpillCores=no leaves
  const std::vector<int>& spilled() const { return spilled_; }

  // The ranks' shares, by local rank (the ranks of no group get none).
  std::vector<Share> run(int local_size) {
    for (size_t g = 0; g < groups_.size(); ++g)
      if (gpu(g)) claim_home(g);
    for (size_t g = 0; g < groups_.size(); ++g)
      if (gpu(g) && count(g) == 0) fall_back(g);
    const bool enough = units_.size() >= members_total();
    // A GPU group with fewer cores than ranks on its GPU's node shares them, and (when it
    // spills) takes worker cores elsewhere so that no two ranks' workers share a core.
    if (enough)
      for (size_t g = 0; g < groups_.size(); ++g)
        if (gpu(g) && (spill_ || borrow_role(g) == Role::Home)) borrow(g, /*from_groups=*/false);
    for (size_t g = 0; g < groups_.size(); ++g)
      if (!gpu(g))
        for (size_t u = 0; u < units_.size(); ++u)
          if (owner_[u] < 0) take(u, g, Role::Home);
    if (enough)
      for (size_t g = 0; g < groups_.size(); ++g)
        if (spill_ || borrow_role(g) == Role::Home) borrow(g, /*from_groups=*/true);
    std::vector<Share> shares(static_cast<size_t>(local_size));
    for (size_t g = 0; g < groups_.size(); ++g) share_out(g, shares);
    spill(shares);
    return shares;
  }

  // The group's units of `role`, home nodes first, then by topology order.
  std::vector<int> units_of(size_t g, Role role) const {
    std::vector<int> out;
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] == static_cast<int>(g) && role_[u] == role) out.push_back(static_cast<int>(u));
    sort_near(g, out);
    return out;
  }

 private:
  bool gpu(size_t g) const { return !groups_[g].home.empty(); }
  NodeKey key(size_t g, int node) const { return node_key(topo_, groups_[g].home, node); }
  void sort_near(size_t g, std::vector<int>& list) const {
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return key(g, units_[a].numa) < key(g, units_[b].numa); });
  }
  size_t members_total() const {
    size_t n = 0;
    for (const auto& g : groups_) n += g.members.size();
    return n;
  }
  size_t count(size_t g) const {
    return static_cast<size_t>(std::count(owner_.begin(), owner_.end(), static_cast<int>(g)));
  }
  size_t home_count(size_t g) const {
    size_t n = 0;
    for (size_t u = 0; u < units_.size(); ++u)
      n += owner_[u] == static_cast<int>(g) && role_[u] == Role::Home ? 1 : 0;
    return n;
  }
  int64_t spare(int g) const {
    return static_cast<int64_t>(count(g)) - static_cast<int64_t>(groups_[g].members.size());
  }
  void take(size_t u, size_t g, Role role) {
    owner_[u] = static_cast<int>(g);
    role_[u] = role;
  }

  void claim_home(size_t g) {
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && contains(groups_[g].home, units_[u].numa)) take(u, g, Role::Home);
  }

  // The GPU's node has no allowed (unclaimed) cores: take the nearest node that has.
  void fall_back(size_t g) {
    int best = -2;
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && (best == -2 || key(g, units_[u].numa) < key(g, best)))
        best = units_[u].numa;
    if (best == -2) return;  // nothing unclaimed: borrowing or sharing below
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0 && units_[u].numa == best) take(u, g, Role::Home);
    groups_[g].note = "; its node has no allowed cores, so the nearest node with some, " +
                      list_text({best}) + " (" + nearness(key(g, best)) + "), is used";
  }

  // How group g takes cores beyond its own: worker-only while it has a core on its GPU's
  // node (its training loops stay there), else whole (its ranks without a GPU, or whose GPU's
  // node has no allowed core, run on whichever node is nearest: a borrowed core may be nearer
  // than the node it fell back to, and a rank planned alone in its cores would run there).
  Role borrow_role(size_t g) const {
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] == static_cast<int>(g) && role_[u] == Role::Home &&
          contains(groups_[g].home, units_[u].numa))
        return Role::Extra;
    return Role::Home;
  }

  // Gives group g one unit per member at least, whole or worker-only as borrow_role says:
  // from unclaimed units, or from groups with more units than members (their worker-only
  // units first, never their last home units): nearest node first, then the donor with the
  // most to spare, then the last unit in topology order.
  void borrow(size_t g, bool from_groups) {
    const Role role = borrow_role(g);
    std::vector<int> nodes;
    while (count(g) < groups_[g].members.size()) {
      int pick = -1;
      std::tuple<NodeKey, int, int64_t> best;
      for (size_t u = 0; u < units_.size(); ++u) {
        const int o = owner_[u];
        const bool home_unit = role_[u] == Role::Home;
        const bool eligible = from_groups
                                  ? (o >= 0 && o != static_cast<int>(g) && spare(o) > 0 &&
                                     (!home_unit || home_count(o) > groups_[o].members.size()))
                                  : o < 0;
        if (!eligible) continue;
        auto rank = std::make_tuple(key(g, units_[u].numa), home_unit ? 1 : 0,
                                    o < 0 ? int64_t{0} : -spare(o));
        if (pick < 0 || rank <= best) {
          pick = static_cast<int>(u);
          best = rank;
        }
      }
      if (pick < 0) return;
      take(pick, g, role);
      if (!contains(nodes, units_[pick].numa)) nodes.push_back(units_[pick].numa);
    }
    if (!nodes.empty())
      groups_[g].note += "; cores of NUMA node " + list_text(nodes) +
                         (role == Role::Home ? " added so that each of its ranks has one"
                                             : " added as worker cores, so that no two of its "
                                               "ranks' workers share a core");
  }

  // Splits group g's units among its ranks: home units evenly while there are as many as
  // ranks, else round robin (ranks share them); worker-only units first to the ranks whose
  // home core another rank also has.
  void share_out(size_t g, std::vector<Share>& shares) {
    const std::vector<int>& members = groups_[g].members;
    const size_t m = members.size();
    std::vector<int> home = units_of(g, Role::Home);
    if (home.empty()) home = shared_pool(g);
    const size_t h = home.size();
    for (size_t i = 0; i < m && h > 0; ++i) {
      Share& s = shares[static_cast<size_t>(members[i])];
      if (h >= m)
        s.home.assign(home.begin() + static_cast<long>(i * h / m),
                      home.begin() + static_cast<long>((i + 1) * h / m));
      else
        s.home = {home[i % h]};
    }
    const std::vector<int> extra = units_of(g, Role::Extra);
    for (size_t k = 0; k < extra.size(); ++k)
      shares[static_cast<size_t>(members[(h % m + k) % m])].extra.push_back(extra[k]);
  }

  // No unit for a group and not enough for every rank: share the units of the nearest node
  // that has any (a GPU's ranks), or all of them (ranks without GPU).
  std::vector<int> shared_pool(size_t g) {
    std::vector<int> all(units_.size());
    for (size_t u = 0; u < units_.size(); ++u) all[u] = static_cast<int>(u);
    if (!gpu(g) || all.empty()) return all;
    sort_near(g, all);
    std::vector<int> pool;
    for (int u : all)
      if (units_[u].numa == units_[all.front()].numa) pool.push_back(u);
    groups_[g].note = "; no free core near it, so its ranks share the cores of NUMA node " +
                      list_text({units_[pool.front()].numa}) + " (" +
                      nearness(key(g, units_[pool.front()].numa)) + ")";
    return pool;
  }

  // What no group took (NUMA nodes without a rank's GPU): worker cores for the ranks
  // nearest them, or idle when the profile says SpillCores=no.
  void spill(std::vector<Share>& shares) {
    std::vector<int> free;
    for (size_t u = 0; u < units_.size(); ++u)
      if (owner_[u] < 0) free.push_back(static_cast<int>(u));
    if (free.empty()) return;
    if (!spill_) {
      idle_ = free;
      return;
    }
    std::vector<SpillTaker> takers;
    for (size_t g = 0; g < groups_.size(); ++g)
      if (gpu(g))
        for (int r : groups_[g].members) {
          const Share& s = shares[static_cast<size_t>(r)];
          takers.push_back({r, groups_[g].home, static_cast<int>(s.home.size() + s.extra.size())});
        }
    const auto got = spill_units(topo_, units_, free, takers);
    for (size_t t = 0; t < takers.size(); ++t) {
      shares[static_cast<size_t>(takers[t].rank)].spilled = got[t];
      for (int u : got[t]) owner_[u] = -2;  // spilled
    }
    spilled_ = free;
  }

  const Topology& topo_;
  const std::vector<Unit>& units_;
  std::vector<Group> groups_;
  bool spill_;
  std::vector<int> owner_;  // unit -> group, -1 unclaimed
  std::vector<Role> role_;
  std::vector<int> idle_, spilled_;
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

RankCores assign_cores(const Topology& topo, const std::vector<Unit>& units, int local_rank,
                       int local_size, const std::vector<int>& gpus, BindMode bind, bool spill) {
  RankCores out;
  int my_gpu = local_rank < static_cast<int>(gpus.size()) ? gpus[local_rank] : -1;
  out.gpu_nodes = gpu_numa_nodes(topo, my_gpu);
  const int n = static_cast<int>(units.size());
  const std::string total = plural(static_cast<size_t>(n), "allowed core");
  if (n == 0) {
    out.reason = "no allowed cores";
    return out;
  }
  if (bind == BindMode::None) {
    out.units = units;
    out.home_units = n;
    out.share_units = std::max(1, n / std::max(1, local_size));
    out.reason = "bind=none: the whole mask (" + total + "), nothing bound; workers sized on " +
                 std::to_string(out.share_units) + " core(s), an even share among " +
                 std::to_string(local_size) + " local rank(s)";
    return out;
  }
  Assignment a(topo, units, make_groups(topo, local_size, gpus, bind), spill);
  const std::vector<Share> shares = a.run(local_size);
  size_t g = 0;
  while (!contains(a.groups()[g].members, local_rank)) ++g;
  const Group& group = a.groups()[g];
  const Share& mine = shares[static_cast<size_t>(local_rank)];
  // The training loop's units: those on the GPU's node, else on the rank's nearest node,
  // wherever they came from, so that the rank planned alone within its cores (the runtime
  // inside a tuned task) finds the same ones.
  std::vector<int> all;
  for (const auto* list : {&mine.home, &mine.extra, &mine.spilled})
    all.insert(all.end(), list->begin(), list->end());
  std::sort(all.begin(), all.end(), [&](int x, int y) {
    return std::make_pair(node_key(topo, group.home, units[x].numa), x) <
           std::make_pair(node_key(topo, group.home, units[y].numa), y);
  });
  const int first = all.empty() ? -1 : units[all.front()].numa;
  const bool at_gpu = !all.empty() && contains(group.home, first);
  auto own = [&](int u) {
    if (group.home.empty()) return contains(mine.home, u);  // no GPU: its share
    return at_gpu ? contains(group.home, units[u].numa) : units[u].numa == first;
  };
  std::stable_partition(all.begin(), all.end(), own);
  for (int u : all) {
    out.units.push_back(units[u]);
    out.home_units += own(u) ? 1 : 0;
  }
  out.share_units = static_cast<int>(out.units.size());

  const size_t m = group.members.size();
  std::vector<int> group_home;  // the distinct home units of the group's ranks
  for (int r : group.members)
    for (int u : shares[static_cast<size_t>(r)].home)
      if (!contains(group_home, u)) group_home.push_back(u);
  std::string share;
  if (group_home.size() >= m) {
    share = plural(group_home.size(), "core") + " for local rank" + (m == 1 ? " " : "s ") +
            list_text(group.members) + "; this rank has " + std::to_string(mine.home.size());
  } else {
    std::vector<int> with;  // the other ranks on this rank's core
    for (int r : group.members)
      if (r != local_rank && shares[static_cast<size_t>(r)].home == mine.home) with.push_back(r);
    share = "only " + plural(group_home.size(), "core") + " for local ranks " +
            list_text(group.members) + ": they share them round robin; this rank has core " +
            pus_of(units, mine.home).to_string() +
            (with.empty() ? ""
                          : " with local rank" + std::string(with.size() == 1 ? " " : "s ") +
                                list_text(with));
  }
  if (!mine.extra.empty())
    share += ", and " + plural(mine.extra.size(), "worker core") + " " +
             pus_of(units, mine.extra).to_string() + " of NUMA node " +
             list_text(unit_nodes(units, mine.extra));
  if (!mine.spilled.empty()) share += ", and " + std::to_string(mine.spilled.size()) + " spilled";
  if (bind == BindMode::Even)
    out.reason = "bind=even: an even split of the " + total + ": " + share;
  else if (!group.home.empty())
    out.reason = "its GPU is near NUMA node " + list_text(group.home) + group.note + ": " + share;
  else if (a.groups().size() > 1)
    out.reason = "no GPU: an even split of the allowed cores away from the local ranks' GPUs" +
                 group.note + ": " + share;
  else
    out.reason = "no GPU: an even split of the " + total + ": " + share;
  if (!group.home.empty())
    out.spill = spill_reason(topo, units, mine.spilled, group.home, a.spilled(), a.idle());
  return out;
}

}  // namespace stoker::planner
