// The one rule for every hwloc topology a stoker process starts (implemented in
// src/topology/hwloc_plugins.cpp): hwloc's plugins stay out of the process.
//
// hwloc loads (dlopen) every plugin in its plugin folder when a process starts its first
// topology (hwloc_components_init, inside hwloc_topology_init), before any per-topology
// setting applies: hwloc_topology_set_components only chooses among components already
// loaded. Only the environment variable HWLOC_PLUGINS_BLACKLIST, read at that moment, keeps
// a plugin from loading. stoker needs none but libxml2's XML parser: hwloc's built-in Linux
// component reads CPUs, NUMA nodes and PCI devices from sysfs. The
// plugins would map the OpenCL ICD loader, X11 and NVIDIA's NV-CONTROL (hwloc_gl), the CUDA
// driver, NVML, ROCm SMI or Level Zero into a training process only to find cores, and can
// initialise a GPU driver before the trainer chose its device (docs/reliability.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct hwloc_topology;  // hwloc.h's hwloc_topology_t is a pointer to it

namespace stoker {

// Every plugin hwloc 2.x ships (Debian's libhwloc-plugins and hwloc's own build options) but
// hwloc_xml_libxml, the XML parser that refuses malformed files (hwloc_plugins.cpp says why).
const std::vector<std::string_view>& skipped_hwloc_plugins();

// HWLOC_PLUGINS_BLACKLIST's value while stoker starts a topology: the user's or admin's own
// list (`user`, kept as it is) followed by stoker's plugins.
std::string hwloc_plugins_blacklist(const std::optional<std::string>& user);

// hwloc_topology_init with the plugins left out. The first call of the process sets
// HWLOC_PLUGINS_BLACKLIST, starts a topology that is never destroyed (hwloc then never loads
// its plugins again) and puts back the process's own value (or none), so child processes see
// the environment they were given; later calls touch no environment (hwloc_plugins.cpp says
// why). HWLOC_COMPONENTS, which hwloc reads at each load, is left to the user. Returns
// hwloc_topology_init's result.
int init_hwloc_topology(hwloc_topology** topology);

}  // namespace stoker
