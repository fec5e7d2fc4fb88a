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
  static const char* const kVariable = "HWLOC_PLUGINS_BLACKLIST";
  // hwloc reads the variable only while it loads its plugins (the first live topology of
  // the process, or the first after all were destroyed), inside hwloc_topology_init.
  static std::mutex serial;
  std::lock_guard<std::mutex> lock(serial);
  const std::optional<std::string> own = process_env()(kVariable);
  ::setenv(kVariable, hwloc_plugins_blacklist(own).c_str(), 1);
  const int rc = hwloc_topology_init(topology);
  if (own) {
    ::setenv(kVariable, own->c_str(), 1);
  } else {
    ::unsetenv(kVariable);
  }
  return rc;
}

}  // namespace stoker
