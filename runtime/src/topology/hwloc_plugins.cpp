// hwloc's plugins kept out of every topology stoker starts (stoker/topology/hwloc_plugins.hpp).
#include "stoker/topology/hwloc_plugins.hpp"

#include <hwloc.h>
#include <stdlib.h>

#include <mutex>

#include "stoker/common/launch_env.hpp"

namespace stoker {

const std::vector<std::string_view>& skipped_hwloc_plugins() {
  // hwloc_xml_libxml is kept: libxml2 refuses XML that is not well-formed, where hwloc's own
  // minimal parser accepts it and hwloc 2.9 then crashes in hwloc_bitmap_or (found by
  // fuzz.hwloc_xml once the plugin was left out; tests/fuzz/corpus/hwloc_xml/). It loads no GL,
  // OpenCL or GPU library.
  static const std::vector<std::string_view> names = {
      "hwloc_pci",  "hwloc_opencl", "hwloc_gl",       "hwloc_cuda",
      "hwloc_nvml", "hwloc_rsmi",   "hwloc_levelzero"};
  return names;
}

std::string hwloc_plugins_blacklist(const std::optional<std::string>& user) {
  // hwloc matches a plugin by searching its name in the whole value (strstr), so any
  // separator works; a comma reads best.
  std::string value = user.value_or("");
  for (std::string_view name : skipped_hwloc_plugins()) {
    if (!value.empty()) value += ',';
    value += name;
  }
  return value;
}

int init_hwloc_topology(hwloc_topology** topology) {
  // hwloc reads HWLOC_PLUGINS_BLACKLIST only while it loads its plugins: at the first live
  // topology of the process, or the first after all were destroyed. So the variable is set
  // once, for the first init, and put back right after; that first topology (the anchor) is
  // never destroyed, so the plugins are never loaded again and the environment is never
  // touched again. setenv/unsetenv are not safe against another thread reading the
  // environment (glibc may free the environment's array under the reader): setting the
  // variable at every init, as stoker did, raced with every such read each time a topology
  // was made; now only the first init can, once, and stoker's first topology is made when a
  // plan is (before a loader's threads start). No per-topology setting can replace the
  // variable: hwloc_topology_set_components() chooses among components already loaded and
  // cannot keep a plugin's libraries out.
  // The anchor lives in a static so that it stays reachable: LeakSanitizer reports a topology
  // no pointer leads to as a leak (904 bytes and its support structs, at every stoker process's
  // exit). volatile keeps an optimiser from dropping a store nothing reads.
  [[maybe_unused]] static hwloc_topology* volatile anchor = nullptr;
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    static const char* const kVariable = "HWLOC_PLUGINS_BLACKLIST";
    const std::optional<std::string> own = process_env()(kVariable);
    ::setenv(kVariable, hwloc_plugins_blacklist(own).c_str(), 1);
    hwloc_topology* first = nullptr;
    if (hwloc_topology_init(&first) == 0) anchor = first;  // else plugins load with the next
    if (own) {
      ::setenv(kVariable, own->c_str(), 1);
    } else {
      ::unsetenv(kVariable);
    }
  });
  return hwloc_topology_init(topology);
}

}  // namespace stoker
