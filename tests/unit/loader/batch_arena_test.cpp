// The batch arena's NUMA placement, read back from the kernel (get_mempolicy on the arena's
// own pages): strict on the plan's node whatever the process's policy, unless the node has
// too little room for it (then preferred, with a note: a strict binding could OOM-kill).
#include <gtest/gtest.h>
#include <linux/mempolicy.h>

#include <thread>

#include "loader/batch_arena.hpp"
#include "loader_fixture.hpp"
#include "stoker/plan/plan.hpp"
#include "topology/mem_policy.hpp"

using namespace stoker;

namespace {

// A sysfs tree whose node 0 reports `free_kib` free and nothing reclaimable.
std::string fake_node(const test::TempDir& dir, uint64_t free_kib) {
  const std::string node = dir.file("sys/devices/system/node/node0");
  std::filesystem::create_directories(node);
  std::ofstream(node + "/meminfo") << "Node 0 MemTotal:       16384000 kB\n"
                                   << "Node 0 MemFree:        " << free_kib << " kB\n"
                                   << "Node 0 Inactive(file):        0 kB\n"
                                   << "Node 0 SReclaimable:          0 kB\n";
  return dir.file("");
}

}  // namespace

TEST(BatchArena, StaysStrictlyOnItsNodeUnderTheLocalPreference) {
  const Topology live = load_topology();
  const int node = live.numa_nodes.at(0).os_index;
  MemPolicy arena_policy, thread_policy;
  bool bound = false;
  std::vector<std::string> notes;
  std::thread t([&] {
    bool preferred = false;
    apply_mem_bind(MemBind::Local, {node}, &preferred);  // the process, as the plugin binds it
    BatchArena arena(4, 16, 4096, {node});
    arena.touch_slot(0);
    arena_policy = read_mem_policy(arena.data(0));
    thread_policy = read_mem_policy();
    bound = arena.numa_bound();
    notes = arena.notes();
  });
  t.join();
  ASSERT_TRUE(bound) << (notes.empty() ? "" : notes[0]);
  EXPECT_TRUE(notes.empty()) << notes[0];
  EXPECT_EQ(arena_policy.mode, MPOL_BIND) << mem_policy_name(arena_policy.mode);
  EXPECT_EQ(arena_policy.nodes, std::vector<int>{node});
  EXPECT_EQ(thread_policy.mode, MPOL_PREFERRED) << "the rest of the process only prefers it";
}

TEST(FaultsLoader, AnArenaItsNodeCannotHoldIsPreferredNotBound) {
  test::TempDir dir;
  const std::string full = fake_node(dir, 1024);  // 1 MiB left on node 0
  const BatchArena::Placement p = BatchArena::placement({0}, 64u << 20, full);
  EXPECT_FALSE(p.strict);
  EXPECT_EQ(p.note,
            "arena prefers NUMA node(s) 0 instead of being bound there: they have 1 MiB free "
            "or reclaimable, under twice the arena's 64 MiB (a strict binding could OOM-kill "
            "the rank)");
  test::TempDir roomy_dir;
  const std::string roomy = fake_node(roomy_dir, 1024 * 1024);  // 1 GiB
  EXPECT_TRUE(BatchArena::placement({0}, 64u << 20, roomy).strict);
  EXPECT_TRUE(BatchArena::placement({0}, 64u << 20, roomy).note.empty());
  // No per-node figures (a kernel without NUMA): bound as asked, as before.
  EXPECT_TRUE(BatchArena::placement({0}, 64u << 20, dir.file("nothing")).strict);
}

// mem-bind=none leaves memory alone, the loader's arena included (it used to be bound to the
// plan's nodes whatever the mode); local and strict bind it.
TEST(FaultsLoader, MemBindNoneLeavesTheArenaUnbound) {
  test::TokenSetup t(100);
  for (const MemBind mode : {MemBind::Local, MemBind::Strict, MemBind::None}) {
    LoaderOptions o = test::test_options(16, 1);
    o.plan->mem_bind = mode;
    const LoaderStats st = Loader(t.source, t.copy, o).stats();
    EXPECT_EQ(st.numa_bound, mode != MemBind::None) << to_string(mode);
  }
  Plan p = test::test_plan(1);
  EXPECT_EQ(BatchArena::nodes_for(p), std::vector<int>{0});
  p.mem_bind = MemBind::None;
  EXPECT_TRUE(BatchArena::nodes_for(p).empty());
}
