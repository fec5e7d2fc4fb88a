// make_plan: the rank planner (rules in docs/planner.md, "Planner rules"). Pure: no I/O,
// never throws for bad input; every decision leaves a one-line reason.
#include <algorithm>
#include <cmath>

#include "plan/core_assignment.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

namespace {

// The controller's room above the starting depth (see Planner::depths).
constexpr int kPrefetchGrowth = 4;
constexpr int kMinPrefetchRoom = 8;

using values::format_bytes;
using values::format_fraction;

std::string nodes_text(const std::vector<int>& nodes) {
  return nodes.empty() ? "none" : CpuSet::from_list(nodes).to_string();
}

std::vector<int> nodes_of(const Topology& topo, const CpuSet& cpus) {
  std::vector<int> out;
  for (const NumaNode& n : topo.numa_nodes)
    if (n.cpus.intersects(cpus)) out.push_back(n.os_index);
  return out;
}

class Planner {
 public:
  explicit Planner(const PlanInput& in) : in_(in), topo_(in.topology ? *in.topology : empty_) {}

  Plan run() {
    for (const std::string& note : in_.notes) why("input", note);
    sanitize();
    cores();
    workers();
    memory();
    devices();
    storage();
    return std::move(plan_);
  }

 private:
  void why(std::string field, std::string text) {
    plan_.reasons.push_back({std::move(field), std::move(text)});
  }

  // Bad inputs a slurmstepd may see get a safe stand-in and a reason (docs/planner.md,
  // "Planner rules", 10).
  void sanitize() {
    profile_ = in_.profile;
    if (profile_.name.empty()) profile_.name = "balanced";
    if (std::string problem = check_profile(profile_); !problem.empty()) {
      why("profile", "profile '" + profile_.name + "' is invalid (" + problem +
                         "): the built-in balanced values are used");
      std::string name = values::valid_name(profile_.name) ? profile_.name : "balanced";
      profile_ = builtin_profiles().get("balanced");
      profile_.name = name;
    }
    plan_.profile = profile_.name;
    why("profile",
        profile_.name + (profile_.description.empty() ? "" : ": " + profile_.description));

    int rank = in_.local_rank, size = in_.local_size;
    if (size < 1 || rank < 0 || rank >= size) {
      why("input", "local rank " + std::to_string(rank) + " of " + std::to_string(size) +
                       " is impossible: planned as a single rank (0 of 1) over the whole mask");
      rank = 0;
      size = 1;
    }
    plan_.local_rank = rank;
    plan_.local_size = size;

    gpus_.assign(size, -1);
    const int n_gpus = static_cast<int>(topo_.gpus.size());
    const int offset = (size == in_.local_size) ? 0 : in_.local_rank;  // the sanitized case
    for (int r = 0; r < size; ++r) {
      int src = r + offset;
      if (src < 0 || src >= static_cast<int>(in_.local_gpus.size())) continue;
      int g = in_.local_gpus[src];
      if (g >= 0 && g < n_gpus)
        gpus_[r] = g;
      else if (g >= 0 && src == in_.local_rank)
        why("gpu", "GPU index " + std::to_string(g) + " is not on this topology (" +
                       std::to_string(n_gpus) + " GPUs): planned without GPU");
    }

    allowed_ = in_.allowed;
    if (!topo_.all_cpus.empty()) {
      CpuSet outside = allowed_ - topo_.all_cpus;
      if (!outside.empty()) {
        allowed_ = allowed_ & topo_.all_cpus;
        why("input", "CPUs " + outside.to_string() + " are not on this node: ignored");
      }
    }
    if (allowed_.empty()) {
      allowed_ = topo_.allowed_cpus.empty() ? topo_.all_cpus : topo_.allowed_cpus;
      why("input", "the CPU mask is empty: planned over the node's allowed CPUs " +
                       (allowed_.empty() ? std::string("(none known)") : allowed_.to_string()));
    }

    mem_limit_ = in_.mem_limit;
    if (mem_limit_ == 0) {
      mem_limit_ = limits::kAssumedMemLimit;
      why("input", "the memory limit is unknown (0): " + format_bytes(mem_limit_) + " assumed");
    }
    plan_.bind = in_.overrides.bind;
    plan_.mem_bind = in_.overrides.mem_bind;
  }

  void cores() {
    std::vector<planner::Unit> units = planner::make_units(topo_, allowed_, profile_.smt_as_cores);
    planner::RankCores rc = planner::assign_cores(topo_, units, plan_.local_rank, plan_.local_size,
                                                  gpus_, plan_.bind, profile_.spill_cores);
    gpu_nodes_ = rc.gpu_nodes;
    for (const auto& u : rc.units) plan_.cpus = plan_.cpus | u.pus;
    why("cpus", rc.reason + (profile_.smt_as_cores ? " (SMT threads counted as cores)" : ""));
    if (!rc.spill.empty()) why("spill", rc.spill);

    // The training loop takes its cores from the rank's own node (the first home_units);
    // cores added from other nodes (borrowed, spilled) run workers only.
    const int have = static_cast<int>(rc.units.size()), home = rc.home_units;
    const int main_n = profile_.main_cores;
    auto add = [&](CpuSet& set, int from, int to) {
      for (int i = from; i < to; ++i) set = set | rc.units[i].pus;
    };
    int worker_units = 0;
    if (home > main_n) {
      add(plan_.main_cpus, 0, main_n);
      add(plan_.worker_cpus, main_n, have);
      worker_units = have - main_n;
      why("main_cpus", "the first " + std::to_string(main_n) + " core(s) for the training loop " +
                           "(MainCores=" + std::to_string(main_n) + "); the rest for workers");
    } else if (home > 0 && have > home) {
      add(plan_.main_cpus, 0, home);
      add(plan_.worker_cpus, home, have);
      worker_units = have - home;
      why("main_cpus", "its " + std::to_string(home) + " core(s) on its own node for the " +
                           "training loop (MainCores=" + std::to_string(main_n) + "); the " +
                           std::to_string(worker_units) + " from other nodes for workers");
    } else if (have > 0) {
      plan_.main_cpus = rc.units[0].pus;
      plan_.worker_cpus = plan_.cpus;
      worker_units = have;
      why("main_cpus", "only " + std::to_string(have) + " core(s) (MainCores=" +
                           std::to_string(main_n) + "): the training loop and workers share them");
    }
    // Workers are sized on this rank's worker cores (bind=none: an even share of the mask).
    worker_units_ = plan_.bind != BindMode::None ? std::max(1, worker_units)
                    : rc.share_units > main_n    ? rc.share_units - main_n
                                                 : std::max(1, rc.share_units);
  }

  void workers() {
    const Caps& caps = in_.caps;
    const int w_cores = worker_units_;
    const int cap =
        std::max(1, static_cast<int>(std::floor(caps.max_worker_fraction * w_cores + 1e-9)));
    const std::string of = " of " + std::to_string(w_cores) + " worker core(s)";
    if (in_.overrides.workers) {
      int req = *in_.overrides.workers;
      plan_.workers = std::clamp(req, 1, std::min(cap, limits::kMaxWorkers));
      std::string text = "requested " + std::to_string(req);
      if (plan_.workers != req)
        text += ", capped at " + std::to_string(plan_.workers) +
                " (MaxWorkerFraction=" + format_fraction(caps.max_worker_fraction) + of + ")";
      why("workers", text);
      fit_threads();
      return;
    }
    double frac = std::min(profile_.worker_fraction, caps.max_worker_fraction);
    const int raw = static_cast<int>(std::lround(frac * w_cores));
    std::string text = "round(" + format_fraction(frac) + " x " + std::to_string(w_cores) +
                       " worker core(s)) = " + std::to_string(raw);
    if (frac < profile_.worker_fraction)
      text += " (WorkerFraction " + format_fraction(profile_.worker_fraction) +
              " capped by MaxWorkerFraction)";
    int w = std::clamp(raw, 1, std::max(1, w_cores));
    if (w != raw) text += ", raised to 1 (never 0 workers)";
    if (profile_.max_readers > 0 && w > profile_.max_readers) {
      w = profile_.max_readers;
      text += ", lowered to MaxReaders=" + std::to_string(w) + " for the storage";
    }
    plan_.workers = w;
    why("workers", text);
    fit_threads();
  }

  // The threads this rank may still create bound the workers, less the loader's other
  // threads (a stream reader, the metrics writer): a worker the system refuses is an error.
  void fit_threads() {
    if (!in_.thread_room) return;
    const uint64_t room = *in_.thread_room;
    const uint64_t fit =
        room > limits::kThreadsBesideWorkers ? room - limits::kThreadsBesideWorkers : 1;
    if (static_cast<uint64_t>(plan_.workers) <= fit) return;
    plan_.workers = static_cast<int>(fit);
    why("workers", "lowered to " + std::to_string(fit) + ": this rank may create " +
                       std::to_string(room) + " more thread(s) (" + in_.thread_room_from + "), " +
                       std::to_string(limits::kThreadsBesideWorkers) +
                       " kept for the loader's other threads");
  }

  // The depths before the budget (docs/planner.md, "Planner rules", 6). A requested depth is fixed:
  // prefetch_max = prefetch. Otherwise the controller may grow the ring to prefetch_max,
  // kPrefetchGrowth x the starting depth (at least kMinPrefetchRoom): the loader reserves
  // and touches prefetch_max slots up front, so the room is bounded, not the whole budget.
  void depths() {
    const Caps& caps = in_.caps;
    if (in_.overrides.prefetch) {
      const int req = *in_.overrides.prefetch;
      plan_.prefetch = plan_.prefetch_max = std::clamp(req, 1, caps.max_prefetch);
      std::string text = "requested " + std::to_string(req);
      if (plan_.prefetch != req)
        text += ", capped at MaxPrefetch=" + std::to_string(caps.max_prefetch);
      why("prefetch", text);
      why("prefetch_max", "= prefetch: a requested depth is fixed (no growth)");
      return;
    }
    const int hi = std::max(1, std::min(profile_.max_prefetch, caps.max_prefetch));
    const int lo = std::min(profile_.min_prefetch, hi);
    const int want = profile_.prefetch_per_worker * plan_.workers;
    plan_.prefetch = std::clamp(want, lo, hi);
    std::string text = std::to_string(profile_.prefetch_per_worker) + " per worker x " +
                       std::to_string(plan_.workers) + " worker(s) = " + std::to_string(want);
    if (want < lo) text += ", raised to MinPrefetch=" + std::to_string(lo);
    if (want > hi) text += ", lowered to MaxPrefetch=" + std::to_string(hi);
    why("prefetch", text);

    const int room = std::max(kPrefetchGrowth * plan_.prefetch, kMinPrefetchRoom);
    plan_.prefetch_max = std::min(room, hi);
    text = "room to grow: " + std::to_string(kPrefetchGrowth) + " x prefetch " +
           std::to_string(plan_.prefetch) + ", at least " + std::to_string(kMinPrefetchRoom) +
           " = " + std::to_string(room);
    if (room > hi) text += ", lowered to MaxPrefetch=" + std::to_string(hi);
    why("prefetch_max", text);
  }

  void memory() {
    const Caps& caps = in_.caps;
    double share = std::min(profile_.mem_share, caps.max_mem_share);
    plan_.mem_budget = static_cast<uint64_t>(std::floor(share * static_cast<double>(mem_limit_)));
    std::string budget = format_fraction(share) + " x memory limit " + format_bytes(mem_limit_) +
                         " = " + format_bytes(plan_.mem_budget);
    if (share < profile_.mem_share)
      budget += " (MemShare " + format_fraction(profile_.mem_share) + " capped by MaxMemShare)";

    std::string batch_why;
    uint64_t batch = kDefaultBatchBytes;
    if (in_.batch_bytes_hint) {
      batch = in_.batch_bytes_hint;
      batch_why = "the caller's hint";
    } else if (profile_.batch_bytes) {
      batch = profile_.batch_bytes;
      batch_why = "the profile's BatchBytes";
    } else {
      batch_why = "assumed (no hint, no BatchBytes in the profile)";
    }
    why("batch_bytes", format_bytes(batch) + " per batch: " + batch_why);
    depths();
    if (!fit_prefetch(plan_, batch)) {
      // Not even one batch fits the share: the loader needs one batch to run at all, so
      // the budget grows to exactly one batch (prefetch_max x batch <= budget still holds).
      plan_.batch_bytes = batch;
      plan_.prefetch = plan_.prefetch_max = 1;
      plan_.mem_budget = batch;
      const std::string one =
          "lowered to 1: one batch (" + format_bytes(batch) + ") exceeds the budget share";
      why("prefetch", one);
      why("prefetch_max", one);
      budget += ", raised to one batch (" + format_bytes(batch) + ")";
      if (batch > mem_limit_)
        budget +=
            "; the batch is larger than the memory limit: expect the job to be killed, "
            "use smaller batches";
    }
    why("mem_budget", budget);
  }

  void devices() {
    const int gpu = gpus_[plan_.local_rank];
    if (gpu >= 0) {
      plan_.gpu = topo_.gpus[gpu].pci_bus_id;
      why("gpu", plan_.gpu + " (NUMA node " + nodes_text(gpu_nodes_) + ")");
    } else {
      why("gpu", "no GPU for this rank");
    }

    switch (in_.overrides.pin_memory) {
      case PinMode::Yes:
      case PinMode::No:
        plan_.pin_memory = in_.overrides.pin_memory == PinMode::Yes;
        why("pin_memory", std::string("requested ") + to_string(in_.overrides.pin_memory));
        break;
      case PinMode::Auto:
        if (profile_.pin_memory != PinMode::Auto) {
          plan_.pin_memory = profile_.pin_memory == PinMode::Yes;
          why("pin_memory",
              std::string("profile says PinMemory=") + to_string(profile_.pin_memory));
        } else {
          plan_.pin_memory = gpu >= 0;
          why("pin_memory", gpu >= 0 ? "auto: yes, the rank has a GPU" : "auto: no GPU, pageable");
        }
    }

    std::vector<int> core_nodes = nodes_of(topo_, plan_.cpus);
    const std::string mode = std::string(" (mem-bind=") + to_string(plan_.mem_bind) + ")";
    if (plan_.mem_bind != MemBind::None && !gpu_nodes_.empty()) {
      plan_.numa = gpu_nodes_;
      why("numa", "memory on the GPU's NUMA node " + nodes_text(gpu_nodes_) + mode);
    } else {
      plan_.numa = core_nodes;
      why("numa",
          "the NUMA node(s) of the rank's cores, " + nodes_text(core_nodes) +
              (plan_.mem_bind == MemBind::None ? "; memory not bound (mem-bind=none)" : mode));
    }
    // NICs follow the GPU (its traffic is what they carry). A rank without one gets none, so
    // that a GPU-less step's plan needs no PCI discovery (the plugin skips it).
    if (gpu >= 0)
      nics(gpu_nodes_.empty() ? core_nodes : gpu_nodes_,
           gpu_nodes_.empty() ? "the rank's cores" : "the GPU");
    else
      why("nics", "none: the rank has no GPU (NICs follow the GPU)");
  }

  // The NICs nearest `anchor` (NUMA nodes): sharing a node, else the smallest hwloc
  // distance; InfiniBand before Ethernet, then by name.
  // How tar shards are read: streams suit network and spinning storage (the profile says).
  void storage() {
    plan_.stream = profile_.stream;
    plan_.shuffle_buffer = profile_.shuffle_buffer;
    why("stream", profile_.stream
                      ? "profile says Stream=yes: tar shards are read as streams (whole shards, "
                        "large sequential reads), shuffled through a buffer of " +
                            std::to_string(profile_.shuffle_buffer) + " samples"
                      : "tar shards are read by random access (profile Stream=no)");
  }

  void nics(const std::vector<int>& anchor, const std::string& what) {
    struct Candidate {
      const Nic* nic;
      int64_t distance;
    };
    std::vector<Candidate> found;
    for (const Nic& nic : topo_.nics) {
      std::vector<int> nodes = nic.numa.empty() ? nodes_of(topo_, nic.local_cpus) : nic.numa;
      int64_t best = -1;
      for (int a : anchor)
        for (int n : nodes) {
          int64_t d = a == n ? 0 : topo_.numa_distance(a, n);
          if (d >= 0 && (best < 0 || d < best)) best = d;
        }
      if (best >= 0) found.push_back({&nic, best});
    }
    if (found.empty()) {
      why("nics", "no NIC with known locality near " + what);
      return;
    }
    int64_t nearest = std::min_element(found.begin(), found.end(), [](auto& a, auto& b) {
                        return a.distance < b.distance;
                      })->distance;
    std::vector<const Nic*> picked;
    for (const auto& c : found)
      if (c.distance == nearest) picked.push_back(c.nic);
    std::sort(picked.begin(), picked.end(), [](const Nic* a, const Nic* b) {
      return std::make_pair(a->kind != "infiniband", a->name) <
             std::make_pair(b->kind != "infiniband", b->name);
    });
    for (const Nic* n : picked) plan_.nics.push_back(n->name);
    why("nics", (nearest == 0 ? "on the NUMA node of "
                              : "nearest (hwloc distance " + std::to_string(nearest) + ") to ") +
                    what + " (NUMA node " + nodes_text(anchor) + "), InfiniBand first");
  }

  const PlanInput& in_;
  const Topology empty_{};
  const Topology& topo_;
  Plan plan_;
  Profile profile_;
  std::vector<int> gpus_;
  std::vector<int> gpu_nodes_;
  CpuSet allowed_;
  uint64_t mem_limit_ = 0;
  int worker_units_ = 1;
};

}  // namespace

Plan make_plan(const PlanInput& in) {
  return Planner(in).run();
}

}  // namespace stoker
