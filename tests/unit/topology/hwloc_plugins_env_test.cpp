// init_hwloc_topology and the process's environment: setenv/unsetenv are not safe against a
// getenv in another thread, so after the process's first topology no topology start may touch
// the environment (it used to set and put back HWLOC_PLUGINS_BLACKLIST at every one). The
// calls are counted by wrappers of libc's setenv, unsetenv and putenv in this test program.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>

#include "mapped_libraries.hpp"
#include "stoker/topology/topology.hpp"

namespace {
std::atomic<int> g_changes{0};
std::atomic<bool> g_counting{false};

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
}  // namespace

extern "C" int setenv(const char* name, const char* value, int overwrite) {
  if (g_counting) ++g_changes;
  static const auto real = next<int (*)(const char*, const char*, int)>("setenv");
  return real(name, value, overwrite);
}
extern "C" int unsetenv(const char* name) {
  if (g_counting) ++g_changes;
  static const auto real = next<int (*)(const char*)>("unsetenv");
  return real(name);
}
extern "C" int putenv(char* text) {
  if (g_counting) ++g_changes;
  static const auto real = next<int (*)(char*)>("putenv");
  return real(text);
}

namespace stoker {
namespace {

TEST(FaultsHwlocEnvironment, TopologiesAfterTheFirstLeaveTheEnvironmentAlone) {
  const Topology first = load_topology(false);  // the process's first, if no test made one
  g_counting = true;
  for (int i = 0; i < 3; ++i) {
    const Topology t = load_topology(i % 2 == 0);
    EXPECT_FALSE(t.cores.empty());
  }
  g_counting = false;
  EXPECT_EQ(g_changes.load(), 0) << "a topology start changed the environment while other "
                                    "threads may read it";
  EXPECT_EQ(test::mapped_gpu_or_hwloc_plugin_libraries(), std::set<std::string>{});
}

}  // namespace
}  // namespace stoker
