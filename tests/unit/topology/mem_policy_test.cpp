// Memory binding on this machine, read back from the kernel (get_mempolicy): mem-bind=local
// prefers the rank's node(s) and falls back, strict binds, none leaves memory alone.
//
// What these tests cannot show here: the fallback itself, a rank whose preferred node is
// full getting its pages from another node. This machine has one NUMA node (there is no
// other node to fall back to), and a fake NUMA layout needs `numa=fake=` on the kernel's
// command line at boot; a memory-only node in a cpuset.mems setup needs such a second
// node too. So they check the policy the kernel holds, which decides the fallback: under
// MPOL_PREFERRED(_MANY) the allocator goes on to the other nodes when the preferred ones
// are full, under MPOL_BIND it reclaims and then OOM-kills within them (the kernel's
// Documentation/admin-guide/mm/numa_memory_policy.rst).
#include <gtest/gtest.h>
#include <linux/mempolicy.h>

#include <functional>
#include <thread>

#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"
#include "topology/mem_policy.hpp"

namespace stoker {
namespace {

// Memory policies are per thread: each case runs on a fresh thread (which starts with the
// test process's policy) so that the test process itself keeps its own.
MemPolicy policy_after(const std::function<void()>& bind) {
  MemPolicy p;
  std::thread t([&] {
    bind();
    p = read_mem_policy();
  });
  t.join();
  return p;
}

std::vector<int> memory_nodes(const Topology& t) {
  std::vector<int> nodes;
  for (const auto& n : t.numa_nodes) nodes.push_back(n.os_index);
  return nodes;
}

// The plugin's call on this machine's first NUMA node, on a fresh thread.
struct Bound {
  int node = 0;
  BindResult result;
  MemPolicy policy;
};
Bound bind_first_node(MemBind mode) {
  const Topology live = load_topology();
  Bound b;
  b.node = live.numa_nodes.at(0).os_index;
  b.policy =
      policy_after([&] { b.result = bind_this_process(live, current_cpu_mask(), {b.node}, mode); });
  return b;
}

TEST(FaultsMemBind, LocalPrefersTheNodeSoAFullNodeFallsBackInsteadOfKilling) {
  const Bound b = bind_first_node(MemBind::Local);
  ASSERT_TRUE(b.result.memory_bound) << b.result.reason;
  EXPECT_EQ(b.policy.mode, MPOL_PREFERRED) << mem_policy_name(b.policy.mode);
  EXPECT_EQ(b.policy.nodes, std::vector<int>{b.node});
  EXPECT_EQ(b.result.memory, "memory prefers NUMA node(s) " + std::to_string(b.node) +
                                 " (MPOL_PREFERRED), falling back to other nodes when full "
                                 "(mem-bind=local)");
}

TEST(MemBind, StrictBindsTheNodes) {
  const Bound b = bind_first_node(MemBind::Strict);
  ASSERT_TRUE(b.result.memory_bound) << b.result.reason;
  EXPECT_EQ(b.policy.mode, MPOL_BIND) << mem_policy_name(b.policy.mode);
  EXPECT_EQ(b.policy.nodes, std::vector<int>{b.node});
  EXPECT_NE(b.result.memory.find("(MPOL_BIND, mem-bind=strict"), std::string::npos)
      << b.result.memory;
}

TEST(MemBind, NoneLeavesTheInheritedPolicy) {
  const Topology live = load_topology();
  BindResult r;
  const MemPolicy p = policy_after(
      [&] { r = bind_this_process(live, current_cpu_mask(), memory_nodes(live), MemBind::None); });
  EXPECT_FALSE(r.memory_bound);
  EXPECT_EQ(r.memory, "");
  EXPECT_EQ(r.reason, "");
  EXPECT_EQ(p.mode, read_mem_policy().mode) << "the thread kept its creator's policy";
}

TEST(MemBind, SeveralNodesArePreferredTogether) {
  const Topology live = load_topology();
  const std::vector<int> nodes = memory_nodes(live);
  if (nodes.size() < 2) GTEST_SKIP() << "one NUMA node on this machine";
  std::string note;
  const MemPolicy p = policy_after([&] {
    bool bound = false;
    note = apply_mem_bind(MemBind::Local, nodes, &bound);
  });
  // MPOL_PREFERRED_MANY (5) from Linux 5.15; before it, the first node alone, with the reason.
  if (p.mode == 5) {
    EXPECT_EQ(p.nodes, nodes);
  } else {
    EXPECT_EQ(p.mode, MPOL_PREFERRED);
    EXPECT_NE(note.find("this kernel has no MPOL_PREFERRED_MANY"), std::string::npos) << note;
  }
}

TEST(MemBind, NodesTheTaskCannotUseAreAReasonNotAnError) {
  const Topology live = load_topology();
  BindResult r;
  policy_after([&] { r = bind_this_process(live, current_cpu_mask(), {1000}, MemBind::Strict); });
  EXPECT_FALSE(r.memory_bound);
  EXPECT_EQ(r.reason.rfind("could not set MPOL_BIND on NUMA node(s) 1000: ", 0), 0u) << r.reason;
}

TEST(MemBind, RoomOnANodeFromSysfs) {
  const Topology live = load_topology();
  bool known = false;
  EXPECT_GT(numa_room({live.numa_nodes.at(0).os_index}, &known), 0u);
  EXPECT_TRUE(known);
  numa_room({1000}, &known);
  EXPECT_FALSE(known);
  numa_room({}, &known);
  EXPECT_FALSE(known);
}

}  // namespace
}  // namespace stoker
