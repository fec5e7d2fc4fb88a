// The machine as the planner sees it: plain data, filled from hwloc (the live
// machine or an XML file). Everything here is copyable and comparable; the hwloc
// handle is kept only so that binding can use it.
//
// Implemented in src/topology/: topology_load.cpp, topology_cache.cpp,
// topology_queries.cpp, binding.cpp, mem_policy.cpp, process_limits.cpp, thread_start.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/enum_names.hpp"

namespace stoker {

struct NumaNode {
  int os_index = -1;
  uint64_t memory_bytes = 0;
  // PUs of the cores whose NUMA node this is (see Core::numa), so every PU is in at most one
  // node; empty for a memory-only node (MCDRAM next to DDR, CXL, a node whose CPUs a cpuset hid).
  CpuSet cpus;
  int package = -1;     // logical index of its package, -1 when not under one
  std::string subtype;  // hwloc subtype when given ("MCDRAM", "GPUMemory"), else ""
};

// A PU with no Core object above it (some XML files) counts as a core of its own.
struct Core {
  int logical_index = -1;  // its position in Topology::cores
  int package = -1;        // logical index of its package, -1 when not under one
  // os_index of its NUMA node: the memory attached to its nearest ancestor that has some,
  // ordinary memory (no subtype) first, then the lowest os_index. -1 when hwloc has no node
  // for it (16amd64-8n2c-cpusets.xml: the node was outside the captured cpuset).
  int numa = -1;
  CpuSet pus;  // its hardware threads (SMT siblings), OS numbers
};

struct Package {
  int logical_index = -1;
  CpuSet cpus;
};

struct Gpu {
  std::string pci_bus_id;  // "0000:07:00.0", lower-case hex
  uint16_t vendor = 0, device = 0;
  std::vector<std::string> os_names;  // "cuda0", "nvml0", ... when hwloc has them
  // os_index of the nearest NUMA node(s): the nodeset of its first non-I/O ancestor, only
  // the nodes with memory when any has some. Several when the PCI root sits above them.
  std::vector<int> numa;
  CpuSet local_cpus;  // that ancestor's CPUs (empty under a memory-only node)
};

struct Nic {
  std::string name;  // OS device name: "mlx5_0", "ib0", "eth0"
  // "infiniband": OpenFabrics devices (mlx5_0) and IPoIB netdevs (ib*, or a 20-byte address);
  // "ethernet": every other network device.
  std::string kind;
  std::string pci_bus_id;  // "" when not known
  std::vector<int> numa;   // os_index of the nearest NUMA node(s)
  CpuSet local_cpus;
};

struct Topology {
  std::string source;           // "this machine" or the XML path
  bool is_this_system = false;  // binding only makes sense when true
  std::vector<Package> packages;
  std::vector<NumaNode> numa_nodes;  // sorted by os_index
  std::vector<Core> cores;           // sorted by first PU
  // NVIDIA GPUs only (vendor 0x10de, class 3D 0x0302 or VGA 0x0300), in PCI bus order,
  // whether or not hwloc found a cudaN/nvmlN device for them.
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  // distances[i][j] between numa_nodes[i] and numa_nodes[j] (hwloc relative latency);
  // empty when the topology has none; 0 for a pair the matrix does not cover.
  std::vector<std::vector<uint64_t>> numa_distances;
  CpuSet all_cpus;      // every PU of the machine (online)
  CpuSet allowed_cpus;  // PUs hwloc says this process may use (cpusets, cgroups)
  // all_cpus plus the PUs hwloc knows exist but has no object for: offline ones, and ones a
  // cpuset hid when an XML was captured without disallowed resources.
  CpuSet complete_cpus;
  uint64_t total_memory = 0;

  const NumaNode* numa_by_os_index(int os_index) const;
  // hwloc distance between two NUMA nodes by os_index; -1 when unknown.
  int64_t numa_distance(int from_os, int to_os) const;
  int smt_width() const;  // max PUs per core (1 = no SMT)

  // Opaque hwloc handle (hwloc_topology_t) for binding; null for hand-built topologies.
  std::shared_ptr<void> hwloc;
};

// Every loader keeps disallowed PUs and nodes (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED), so
// allowed_cpus can be smaller than all_cpus.
// Loads the live machine: with PCI/OS devices, so GPUs and NICs show; with_io false skips
// them (no GPUs, no NICs) and is several times faster. Throws stoker::Error when hwloc fails.
Topology load_topology(bool with_io = true);
// Loads an hwloc XML file. Throws stoker::Error naming the file when unreadable or invalid.
Topology load_topology_xml(const std::string& path);
// Same, from XML text (used by tests and generated fixtures).
Topology load_topology_xml_text(const std::string& xml, const std::string& name = "<xml>");

// This machine's topology through a cache of hwloc XML in the folder `dir` (the plugin's;
// /run/stoker by default), so that only the first step after boot pays for discovery.
// - The file is dir/topology-<key>.xml, key = topology_cache_key(with_io): boot id and the
//   running hwloc's release; the XML records the key and the hwloc release that wrote it,
//   and both must match too. Another key (reboot, hwloc upgrade): discovered again.
// - Read only when the folder and the file are owned by root and writable by no one else,
//   the file is a regular file (no symbolic link) and a valid topology; otherwise ignored.
// - Not read: discovered (load_topology(with_io)) and, when the caller is root, written
//   atomically (a temporary file in dir, fsync, rename), mode 0644; dir is created (0755)
//   when missing.
// A cache that cannot be read or written is never an error: only a failed discovery throws.
struct CachedTopology {
  Topology topology;
  std::string path;  // the cache file for this machine's key ("" when there is no key)
  bool from_cache = false;
  bool written = false;
  std::string note;  // why it was not read, and why not written; "" when read or written
};
CachedTopology load_topology_cached(const std::string& dir, bool with_io);

// The cache key of this machine: "<boot id>-hwloc<release>", plus "-noio" without I/O
// devices. Throws stoker::Error when the boot id cannot be read.
std::string topology_cache_key(bool with_io);

// The calling process's (thread's) allowed CPUs (sched_getaffinity).
CpuSet current_cpu_mask();
// The CPUs this task was granted, which planning starts from: current_cpu_mask(), or, once
// stoker pinned the training loop's thread to the plan's main CPUs (pin_main_thread), the
// mask that thread had before, so that a second loader or plan sees the whole task.
CpuSet task_cpu_mask();
// The memory this process may use: cgroup v2 memory.max, else cgroup v1
// memory.limit_in_bytes, else physical memory. `root` lets tests point at a fake tree.
uint64_t memory_limit_bytes(const std::string& root = "/");

// How many more threads this process may create, and the limits that say so:
//  - ulimit -u (RLIMIT_NPROC): counts every thread of the real user on the machine (root
//    and CAP_SYS_RESOURCE / CAP_SYS_ADMIN are exempt);
//  - the pids cgroup (v2 or v1): pids.max - pids.current of this process's cgroup and of
//    each cgroup above it (Slurm and systemd set it per job or per service);
//  - kernel.threads-max, when it is the tightest.
// `root` lets tests point at a fake /proc and /sys (the rlimit is always this process's).
struct ThreadRoom {
  std::optional<uint64_t> room;  // nullopt: none could be read (no /proc)
  // Each limit that applies, with its numbers ("ulimit -u (RLIMIT_NPROC) is 20 and user
  // nobody (uid 65534) runs 18 threads"), the tightest first.
  std::vector<std::string> limits;
  // "may create 2 more thread(s): ulimit -u ..." or "no thread limit applies".
  std::string text() const;
};
ThreadRoom thread_room(const std::string& root = "/");

struct BindResult {
  bool cpus_bound = false, memory_bound = false;
  std::string reason;  // why something was not bound, "" when all asked for was done
  std::string memory;  // the memory policy applied ("memory prefers NUMA node(s) 0 ..."), or ""
};
// Memory of the rank's process (the plugin binds it before exec):
//   Local:  prefer the plan's NUMA node(s), fall back to the others when they are full
//           (MPOL_PREFERRED / MPOL_PREFERRED_MANY): a full node never kills the rank;
//   Strict: only the plan's node(s) (MPOL_BIND): a full node OOM-kills the rank;
//   None:   not bound.
// The batch arena is placed strictly on the node(s) in every mode but None, when they have
// room for it (BatchArena).
enum class MemBind { Local, Strict, None };
inline constexpr EnumName<MemBind> kMemBindNames[] = {
    {MemBind::Local, "local"}, {MemBind::Strict, "strict"}, {MemBind::None, "none"}};
inline const char* to_string(MemBind m) {
  return name_of(kMemBindNames, m);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<MemBind> parse_mem_bind(std::string_view s) {
  return value_named(kMemBindNames, s);
}
// Binds the calling process to `cpus` (hwloc) and its memory to the NUMA nodes `numa` as
// `mem_bind` says (MemBind: local prefers them and falls back to other nodes,
// strict binds, none leaves memory alone; no nodes: nothing bound). Memory policies are
// per thread: called before exec (the plugin's task_init) it covers the whole task. Never
// throws; skips with a reason when the topology is not this system or the kernel refuses.
BindResult bind_this_process(const Topology& topo, const CpuSet& cpus, const std::vector<int>& numa,
                             MemBind mem_bind);

// Binds the calling thread to `cpus` with hwloc (a process-wide, I/O-free hwloc
// topology loaded once). Used by loader workers. Returns false and fills `why`
// when the CPUs are not available to this process or hwloc refuses.
bool bind_this_thread(const CpuSet& cpus, std::string* why);

}  // namespace stoker
