#include "topology/hwloc_convert.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>

namespace stoker::detail {

namespace {

constexpr int kMaxIndex = CpuSet::kMaxCpu;  // CpuSet's parsing bound; stops infinite bitmaps

constexpr uint16_t kNvidiaVendor = 0x10de;
constexpr uint16_t kClassVga = 0x0300;
constexpr uint16_t kClass3d = 0x0302;

// The NUMA nodes hanging (possibly through memory-side caches) below `obj`'s memory children.
void collect_memory_nodes(hwloc_obj_t obj, std::vector<hwloc_obj_t>& out) {
  for (hwloc_obj_t m = obj->memory_first_child; m; m = m->next_sibling) {
    if (m->type == HWLOC_OBJ_NUMANODE) {
      out.push_back(m);
    } else {
      collect_memory_nodes(m, out);
    }
  }
}

// The NUMA node a CPU object "belongs to": the memory attached to its closest ancestor that
// has any, preferring ordinary DRAM (no subtype) over MCDRAM/NVM/GPU memory, then the lowest
// OS index. This is what makes MCDRAM and CXL nodes come out as memory-only (no CPUs).
int local_numa_of(hwloc_obj_t obj) {
  for (hwloc_obj_t a = obj; a; a = a->parent) {
    std::vector<hwloc_obj_t> nodes;
    collect_memory_nodes(a, nodes);
    if (nodes.empty()) continue;
    auto rank = [](hwloc_obj_t n) {
      return std::make_tuple(n->subtype != nullptr && n->subtype[0] != '\0', n->os_index);
    };
    auto best = std::min_element(nodes.begin(), nodes.end(),
                                 [&](hwloc_obj_t x, hwloc_obj_t y) { return rank(x) < rank(y); });
    return static_cast<int>((*best)->os_index);
  }
  return -1;
}

int package_of(hwloc_obj_t obj) {
  for (hwloc_obj_t a = obj->parent; a; a = a->parent) {
    if (a->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(a->logical_index);
  }
  return -1;
}

std::string format_bus_id(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", static_cast<unsigned>(pci.domain),
                static_cast<unsigned>(pci.bus), static_cast<unsigned>(pci.dev),
                static_cast<unsigned>(pci.func));
  return buf;
}

// Locality of an I/O object: the first non-I/O ancestor's NUMA nodes (those with memory when
// any has some) and CPUs.
void io_locality(hwloc_topology_t topo, hwloc_obj_t io, const Topology& t, std::vector<int>& numa,
                 CpuSet& cpus) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, io);
  if (!anc) return;
  cpus = to_cpuset(anc->cpuset);
  std::vector<int> all, with_memory;
  for (int n : to_cpuset(anc->nodeset).list()) {
    const NumaNode* node = t.numa_by_os_index(n);
    if (!node) continue;
    all.push_back(n);
    if (node->memory_bytes > 0) with_memory.push_back(n);
  }
  numa = with_memory.empty() ? all : with_memory;
}

void add_packages(hwloc_topology_t topo, Topology& t) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t p = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, i);
    t.packages.push_back({static_cast<int>(p->logical_index), to_cpuset(p->cpuset)});
  }
}

void add_numa_nodes(hwloc_topology_t topo, Topology& t) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
    NumaNode node;
    node.os_index = static_cast<int>(o->os_index);
    node.memory_bytes = o->attr->numanode.local_memory;
    node.package = package_of(o);
    node.subtype = o->subtype ? o->subtype : "";
    t.numa_nodes.push_back(node);
  }
  std::sort(t.numa_nodes.begin(), t.numa_nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.os_index < b.os_index; });
}

// Cores (a PU without a Core object above it counts as its own core), and each NUMA node's
// CPUs as the union of the cores that belong to it.
void add_cores(hwloc_topology_t topo, Topology& t) {
  CpuSet online = to_cpuset(hwloc_topology_get_topology_cpuset(topo));
  std::set<hwloc_obj_t> seen;
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i);
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t owner = core ? core : pu;
    if (!seen.insert(owner).second) continue;
    Core c;
    c.package = package_of(owner);
    c.numa = local_numa_of(owner);
    // A core's cpuset may name offline threads; only online PUs count.
    c.pus = to_cpuset(owner->cpuset) & online;
    t.cores.push_back(c);
  }
  std::sort(t.cores.begin(), t.cores.end(),
            [](const Core& a, const Core& b) { return a.pus.first() < b.pus.first(); });
  for (size_t i = 0; i < t.cores.size(); ++i) {
    Core& c = t.cores[i];
    c.logical_index = static_cast<int>(i);
    for (NumaNode& node : t.numa_nodes) {
      if (node.os_index == c.numa) node.cpus = node.cpus | c.pus;
    }
  }
}

void add_gpus(hwloc_topology_t topo, Topology& t) {
  std::vector<hwloc_obj_t> devs;
  for (hwloc_obj_t d = hwloc_get_next_pcidev(topo, nullptr); d;
       d = hwloc_get_next_pcidev(topo, d)) {
    const auto& pci = d->attr->pcidev;
    if (pci.vendor_id == kNvidiaVendor && (pci.class_id == kClass3d || pci.class_id == kClassVga))
      devs.push_back(d);
  }
  auto key = [](hwloc_obj_t d) {
    const auto& p = d->attr->pcidev;
    return std::make_tuple(p.domain, p.bus, p.dev, p.func);
  };
  std::sort(devs.begin(), devs.end(),
            [&](hwloc_obj_t a, hwloc_obj_t b) { return key(a) < key(b); });
  for (hwloc_obj_t d : devs) {
    Gpu g;
    g.pci_bus_id = format_bus_id(d->attr->pcidev);
    g.vendor = d->attr->pcidev.vendor_id;
    g.device = d->attr->pcidev.device_id;
    for (hwloc_obj_t c = d->io_first_child; c; c = c->next_sibling) {
      if (c->type == HWLOC_OBJ_OS_DEVICE && c->name) g.os_names.push_back(c->name);
    }
    io_locality(topo, d, t, g.numa, g.local_cpus);
    t.gpus.push_back(std::move(g));
  }
}

// IPoIB interfaces are "ib*" on Linux; their hardware address is 20 bytes (59 characters).
bool is_infiniband_netdev(hwloc_obj_t os) {
  std::string_view name = os->name ? os->name : "";
  if (name.substr(0, 2) == "ib") return true;
  const char* addr = hwloc_obj_get_info_by_name(os, "Address");
  return addr && std::string_view(addr).size() == 59;
}

void add_nics(hwloc_topology_t topo, Topology& t) {
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os;
       os = hwloc_get_next_osdev(topo, os)) {
    auto type = os->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    Nic nic;
    nic.name = os->name ? os->name : "";
    bool ib = type == HWLOC_OBJ_OSDEV_OPENFABRICS || is_infiniband_netdev(os);
    nic.kind = ib ? "infiniband" : "ethernet";
    if (os->parent && os->parent->type == HWLOC_OBJ_PCI_DEVICE)
      nic.pci_bus_id = format_bus_id(os->parent->attr->pcidev);
    io_locality(topo, os, t, nic.numa, nic.local_cpus);
    t.nics.push_back(std::move(nic));
  }
}

void add_distances(hwloc_topology_t topo, Topology& t) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      nr == 0 || !dist) {
    return;
  }
  size_t n = t.numa_nodes.size();
  std::vector<int> pos(dist->nbobjs, -1);  // distance-matrix row -> index in numa_nodes
  for (unsigned i = 0; i < dist->nbobjs; ++i) {
    for (size_t k = 0; k < n; ++k) {
      if (t.numa_nodes[k].os_index == static_cast<int>(dist->objs[i]->os_index))
        pos[i] = static_cast<int>(k);
    }
  }
  t.numa_distances.assign(n, std::vector<uint64_t>(n, 0));  // 0 = unknown pair
  for (unsigned i = 0; i < dist->nbobjs; ++i) {
    for (unsigned j = 0; j < dist->nbobjs; ++j) {
      if (pos[i] >= 0 && pos[j] >= 0)
        t.numa_distances[pos[i]][pos[j]] = dist->values[i * dist->nbobjs + j];
    }
  }
  hwloc_distances_release(topo, dist);
}

}  // namespace

CpuSet to_cpuset(hwloc_const_bitmap_t bitmap) {
  CpuSet s;
  if (!bitmap) return s;
  for (int i = hwloc_bitmap_first(bitmap); i >= 0 && i < kMaxIndex;
       i = hwloc_bitmap_next(bitmap, i)) {
    s.set(i);
  }
  return s;
}

hwloc_bitmap_t to_hwloc_bitmap(const CpuSet& cpus) {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  for (int c : cpus.list()) hwloc_bitmap_set(b, static_cast<unsigned>(c));
  return b;
}

Topology convert_topology(hwloc_topology_t topo) {
  Topology t;
  add_packages(topo, t);
  add_numa_nodes(topo, t);
  add_cores(topo, t);
  add_gpus(topo, t);
  add_nics(topo, t);
  add_distances(topo, t);
  t.all_cpus = to_cpuset(hwloc_topology_get_topology_cpuset(topo));
  t.allowed_cpus = to_cpuset(hwloc_topology_get_allowed_cpuset(topo));
  t.complete_cpus = to_cpuset(hwloc_topology_get_complete_cpuset(topo));
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  t.total_memory = root ? root->total_memory : 0;
  return t;
}

}  // namespace stoker::detail
