// Private: Linux memory policies, set and read with the raw syscalls (set_mempolicy,
// get_mempolicy, mbind), so that the policy chosen is the one applied and can be named.
// hwloc hides that choice (its non-strict bind becomes MPOL_PREFERRED_MANY or
// MPOL_PREFERRED depending on the kernel), and the plan's reasons must say which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

enum class MemBind;

struct MemPolicy {
  int mode = 0;            // MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_PREFERRED_MANY, ...
  std::vector<int> nodes;  // the policy's nodes, empty for MPOL_DEFAULT
};

// The calling thread's policy, or (addr given) the policy of the mapping holding addr.
// Throws stoker::Error naming errno when the kernel refuses (no NUMA support).
MemPolicy read_mem_policy(const void* addr = nullptr);

// "MPOL_BIND", "MPOL_PREFERRED", ...: the kernel's names, as the reasons print them.
std::string mem_policy_name(int mode);

// Sets the calling thread's policy for `mode` on `numa` (threads it creates and programs
// it execs inherit it):
//   Local:  prefer the nodes and fall back to any other when they are full. One node:
//           MPOL_PREFERRED. Several: MPOL_PREFERRED_MANY (Linux 5.15+); on older kernels
//           MPOL_PREFERRED on the first node, since MPOL_BIND would bring back the OOM kill.
//   Strict: MPOL_BIND: only those nodes; a full node OOM-kills the task (the admin's choice).
//   None:   nothing set (the inherited policy stays).
// Never throws. Returns what was applied, or why not (`bound` says which).
std::string apply_mem_bind(MemBind mode, const std::vector<int>& numa, bool* bound);

// Free or reclaimable (inactive file cache, reclaimable slab) bytes on the NUMA nodes, from
// <root>/sys/devices/system/node/node<N>/meminfo. `known` is false (and 0 returned) when
// no node is given or a node's file cannot be read.
uint64_t numa_room(const std::vector<int>& numa, bool* known, const std::string& root = "/");

}  // namespace stoker
