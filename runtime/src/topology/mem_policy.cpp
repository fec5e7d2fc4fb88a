#include "topology/mem_policy.hpp"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "stoker/common/error.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {

namespace {

constexpr unsigned long kMaskBits = 1024;  // NUMA node ids the masks hold
constexpr size_t kWordBits = 8 * sizeof(unsigned long);
using NodeMask = std::vector<unsigned long>;

NodeMask mask_of(const std::vector<int>& nodes) {
  NodeMask m(kMaskBits / kWordBits, 0);
  for (int n : nodes) {
    if (n >= 0 && static_cast<unsigned long>(n) < kMaskBits)
      m[static_cast<size_t>(n) / kWordBits] |= 1ul << (static_cast<size_t>(n) % kWordBits);
  }
  return m;
}

std::string nodes_text(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

// The kernel reads maxnode - 1 bits (a historical off-by-one that libnuma also follows).
long set_policy(int mode, const std::vector<int>& nodes) {
  const NodeMask m = mask_of(nodes);
  return syscall(SYS_set_mempolicy, mode, m.data(), kMaskBits + 1);
}

}  // namespace

MemPolicy read_mem_policy(const void* addr) {
  int mode = 0;
  NodeMask m(kMaskBits / kWordBits, 0);
  const unsigned long flags = addr ? MPOL_F_ADDR : 0;
  if (syscall(SYS_get_mempolicy, &mode, m.data(), kMaskBits + 1, addr, flags) != 0) {
    throw Error("get_mempolicy", std::string("the kernel refused: ") + std::strerror(errno),
                "run on a kernel with NUMA support");
  }
  MemPolicy p;
  p.mode = mode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES);
  for (size_t b = 0; b < kMaskBits; ++b) {
    if (m[b / kWordBits] & (1ul << (b % kWordBits))) p.nodes.push_back(static_cast<int>(b));
  }
  return p;
}

std::string mem_policy_name(int mode) {
  switch (mode) {
    case MPOL_DEFAULT:
      return "MPOL_DEFAULT";
    case MPOL_PREFERRED:
      return "MPOL_PREFERRED";
    case MPOL_BIND:
      return "MPOL_BIND";
    case MPOL_INTERLEAVE:
      return "MPOL_INTERLEAVE";
    case MPOL_LOCAL:
      return "MPOL_LOCAL";
    case 5:  // MPOL_PREFERRED_MANY: Linux 5.15+, not in every libc's headers
      return "MPOL_PREFERRED_MANY";
  }
  return "mode " + std::to_string(mode);
}

std::string apply_mem_bind(MemBind mode, const std::vector<int>& numa, bool* bound) {
  *bound = false;
  if (mode == MemBind::None) return "memory not bound (mem-bind=none)";
  if (numa.empty()) return "memory not bound: the plan names no NUMA node";
  const std::string nodes = "NUMA node(s) " + nodes_text(numa);
  const auto refused = [&](int policy) {
    return "could not set " + mem_policy_name(policy) + " on " + nodes + ": " +
           std::strerror(errno);
  };
  if (mode == MemBind::Strict) {
    if (set_policy(MPOL_BIND, numa) != 0) return refused(MPOL_BIND);
    *bound = true;
    return "memory bound to " + nodes +
           " (MPOL_BIND, mem-bind=strict: a full node OOM-kills the task)";
  }
  const std::string fallback = ", falling back to other nodes when full (mem-bind=local)";
  if (numa.size() > 1) {
    constexpr int kPreferredMany = 5;  // MPOL_PREFERRED_MANY
    if (set_policy(kPreferredMany, numa) == 0) {
      *bound = true;
      return "memory prefers " + nodes + " (MPOL_PREFERRED_MANY)" + fallback;
    }
    if (errno != EINVAL) return refused(kPreferredMany);
    if (set_policy(MPOL_PREFERRED, {numa.front()}) != 0) return refused(MPOL_PREFERRED);
    *bound = true;
    return "memory prefers NUMA node " + std::to_string(numa.front()) +
           " (MPOL_PREFERRED: this kernel has no MPOL_PREFERRED_MANY, Linux 5.15+, to prefer " +
           nodes_text(numa) + " together)" + fallback;
  }
  if (set_policy(MPOL_PREFERRED, numa) != 0) return refused(MPOL_PREFERRED);
  *bound = true;
  return "memory prefers " + nodes + " (MPOL_PREFERRED)" + fallback;
}

uint64_t numa_room(const std::vector<int>& numa, bool* known, const std::string& root) {
  *known = !numa.empty();
  uint64_t room = 0;
  for (int n : numa) {
    std::ifstream in(root + "/sys/devices/system/node/node" + std::to_string(n) + "/meminfo");
    if (!in) {
      *known = false;
      return 0;
    }
    // "Node 0 MemFree:   123456 kB": what the kernel can give without touching other nodes.
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string node, id, key;
      uint64_t kib = 0;
      if (!(words >> node >> id >> key >> kib)) continue;
      if (key == "MemFree:" || key == "Inactive(file):" || key == "SReclaimable:")
        room += kib * 1024;
    }
  }
  return room;
}

}  // namespace stoker
