// The libraries a planning process must never map: hwloc's plugins (but libxml2's
// XML parser) and what they load (the OpenCL ICD loader, GL/EGL/X11 and NVIDIA's NV-CONTROL,
// libpciaccess), and the GPU drivers' user-space libraries (CUDA driver, NVML, ROCm SMI, Level
// Zero).
#pragma once

#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace stoker::test {

inline bool is_gpu_or_hwloc_plugin_library(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  // A plugin itself, but libxml2's XML parser, which stoker keeps (hwloc_plugins.cpp).
  if (path.find("/hwloc/hwloc_") != std::string::npos)
    return path.find("/hwloc/hwloc_xml_libxml") == std::string::npos;
  for (std::string_view prefix :
       {"libOpenCL.", "libGL.", "libGLX", "libEGL", "libX11.", "libXNVCtrl", "libpciaccess",
        "libcuda.so", "libnvidia-ml", "librocm_smi", "libze_loader"}) {
    if (name.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

// The paths in /proc/self/maps that is_gpu_or_hwloc_plugin_library names.
inline std::set<std::string> mapped_gpu_or_hwloc_plugin_libraries() {
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (is_gpu_or_hwloc_plugin_library(path)) found.insert(path);
  }
  return found;
}

}  // namespace stoker::test
