// init_hwloc_topology: no hwloc plugin, and so no GL, OpenCL or GPU driver library, enters a
// process that loads a topology; the process's own environment is left as it was.
#include "stoker/topology/hwloc_plugins.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "mapped_libraries.hpp"
#include "scoped_env.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;

TEST(HwlocPlugins, TheBlacklistKeepsTheUsersOwnEntriesFirst) {
  EXPECT_EQ(hwloc_plugins_blacklist(std::nullopt),
            "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero");
  EXPECT_EQ(hwloc_plugins_blacklist("my_plugin").rfind("my_plugin,hwloc_pci,", 0), 0u);
}

// The folder hwloc loads its plugins from: beside the libhwloc this process runs.
fs::path hwloc_plugin_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hwloc_topology_init), &info) == 0 || !info.dli_fname)
    return {};
  return fs::path(info.dli_fname).parent_path() / "hwloc";
}

TEST(HwlocPlugins, EveryPluginInstalledHereIsSkipped) {
  const fs::path folder = hwloc_plugin_folder();
  if (!fs::is_directory(folder)) GTEST_SKIP() << "no hwloc plugin folder at " << folder;
  int plugins = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".so") continue;
    ++plugins;
    const std::string name = entry.path().stem().string();
    if (name == "hwloc_xml_libxml") continue;  // kept on purpose: libxml2 refuses malformed XML
    const auto& skipped = skipped_hwloc_plugins();
    EXPECT_NE(std::find(skipped.begin(), skipped.end(), name), skipped.end())
        << name << " (in " << folder << ") is a plugin this hwloc has that stoker does not skip";
  }
  EXPECT_GT(plugins, 0) << folder;
}

// Fails on a machine with libhwloc-plugins and the OpenCL ICD loader or X11 installed (the
// project's own dependencies) when a live topology is loaded without the rule.
TEST(FaultsTopology, ALiveTopologyMapsNoHwlocPluginGlOpenClOrGpuDriverLibrary) {
  test::ScopedEnv env;
  env.set("HWLOC_PLUGINS_BLACKLIST", nullptr);
  const Topology with_io = load_topology(true);
  const Topology without_io = load_topology(false);
  EXPECT_FALSE(with_io.cores.empty());
  EXPECT_EQ(test::mapped_gpu_or_hwloc_plugin_libraries(), std::set<std::string>{});
  EXPECT_EQ(std::getenv("HWLOC_PLUGINS_BLACKLIST"), nullptr) << "the process's environment changed";
}

TEST(HwlocPlugins, AUsersOwnBlacklistIsPutBackAfterTheLoad) {
  test::ScopedEnv env;
  env.set("HWLOC_PLUGINS_BLACKLIST", "site_plugin");
  const Topology t = load_topology(false);
  ASSERT_NE(std::getenv("HWLOC_PLUGINS_BLACKLIST"), nullptr);
  EXPECT_STREQ(std::getenv("HWLOC_PLUGINS_BLACKLIST"), "site_plugin");
  EXPECT_EQ(test::mapped_gpu_or_hwloc_plugin_libraries(), std::set<std::string>{});
}

}  // namespace
}  // namespace stoker
