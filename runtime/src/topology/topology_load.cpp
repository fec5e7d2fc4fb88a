// Loading a Topology from the live machine or from hwloc XML.
#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "stoker/common/error.hpp"
#include "stoker/topology/hwloc_plugins.hpp"
#include "stoker/topology/topology.hpp"
#include "topology/hwloc_convert.hpp"
#include "topology/hwloc_xml.hpp"
#include "topology/xml_precheck.hpp"

namespace stoker {

namespace {

// Owns an hwloc topology until it is handed to a Topology (whose shared_ptr destroys it).
// Started without hwloc's plugins (init_hwloc_topology).
class HwlocHandle {
 public:
  explicit HwlocHandle(const std::string& where) {
    if (init_hwloc_topology(&topo_) != 0) {
      throw Error(where, std::string("hwloc_topology_init failed: ") + std::strerror(errno),
                  "check that libhwloc is installed and memory is available");
    }
  }
  ~HwlocHandle() {
    if (topo_) hwloc_topology_destroy(topo_);
  }
  HwlocHandle(const HwlocHandle&) = delete;
  HwlocHandle& operator=(const HwlocHandle&) = delete;

  hwloc_topology_t get() const { return topo_; }
  std::shared_ptr<void> release() {
    hwloc_topology_t t = topo_;
    topo_ = nullptr;
    return std::shared_ptr<void>(
        t, [](void* p) { hwloc_topology_destroy(static_cast<hwloc_topology_t>(p)); });
  }

 private:
  hwloc_topology_t topo_ = nullptr;
};

// Disallowed PUs and NUMA nodes stay in the topology (so allowed_cpus can be smaller than
// all_cpus); I/O objects are kept so GPUs and NICs show.
void configure(hwloc_topology_t topo, hwloc_type_filter_e io_filter) {
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  hwloc_topology_set_io_types_filter(topo, io_filter);
}

Topology finish(HwlocHandle& handle, const std::string& source, bool this_system) {
  Topology t = detail::convert_topology(handle.get());
  t.source = source;
  t.is_this_system = this_system;
  t.hwloc = handle.release();
  return t;
}

// Loads from a file (path set) or from text (path empty); `name` goes into errors.
// `this_machine`: the XML is this node's own (the plugin's cache), so hwloc may bind with
// it and takes the allowed CPUs and nodes from this process, as a live discovery does.
Topology load_xml(const std::string& path, const std::string& text, const std::string& name,
                  bool this_machine = false, bool with_io = true) {
  if (path.empty()) {
    detail::precheck_hwloc_xml(text, name);
  } else {
    std::ifstream in(path, std::ios::binary);
    detail::precheck_hwloc_xml(std::string(std::istreambuf_iterator<char>(in), {}), name);
  }
  HwlocHandle h(name);
  configure(h.get(), with_io ? HWLOC_TYPE_FILTER_KEEP_ALL : HWLOC_TYPE_FILTER_KEEP_NONE);
  if (this_machine) {
    hwloc_topology_set_flags(h.get(), HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
                                          HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                          HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES);
  }
  // hwloc wants a buffer's length including the terminating NUL.
  int set = path.empty() ? hwloc_topology_set_xmlbuffer(h.get(), text.c_str(),
                                                        static_cast<int>(text.size() + 1))
                         : hwloc_topology_set_xml(h.get(), path.c_str());
  if (set != 0 || hwloc_topology_load(h.get()) != 0) {
    throw Error(name, "not a valid hwloc XML topology",
                "export one with `lstopo-no-graphics --of xml FILE.xml` (hwloc 2.x) and check "
                "it with `lstopo-no-graphics --input FILE.xml`");
  }
  if (hwloc_get_nbobjs_by_type(h.get(), HWLOC_OBJ_PU) <= 0) {
    throw Error(name, "the hwloc XML topology has no processing units (PU objects)",
                "use a complete topology exported by lstopo");
  }
  return finish(h, name, this_machine);
}

// A root object's info value ("" when absent).
std::string root_info(const Topology& t, const char* name) {
  const auto topo = static_cast<hwloc_topology_t>(t.hwloc.get());
  const char* v = topo ? hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), name) : nullptr;
  return v ? v : "";
}

}  // namespace

Topology load_topology(bool with_io) {
  const std::string where = "hwloc (this machine)";
  HwlocHandle h(where);
  // Without I/O, hwloc reads no PCI bus and no OS devices: the slow part of discovery.
  configure(h.get(), with_io ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT : HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(h.get()) != 0) {
    throw Error(where, std::string("topology discovery failed: ") + std::strerror(errno),
                "pass a topology file with --topology FILE.xml");
  }
  return finish(h, "this machine", true);
}

Topology load_topology_xml(const std::string& path) {
  // Check the file first: hwloc's own error for a missing file is only a failed load.
  const std::string todo =
      "give the path of an hwloc XML file (lstopo-no-graphics --of xml FILE.xml)";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(path, "cannot read the topology file: it is a directory", todo);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(path, std::string("cannot read the topology file: ") + std::strerror(errno), todo);
  }
  // hwloc reads the file itself (faster than handing it a copy as a buffer).
  return load_xml(path, "", path);
}

Topology load_topology_xml_text(const std::string& xml, const std::string& name) {
  return load_xml("", xml, name);
}

namespace detail {

std::string hwloc_runtime_version() {
  // hwloc has no call for its release, but every load records it in the root's infos; a
  // one-PU synthetic topology costs microseconds.
  static const std::string version = [] {
    HwlocHandle h("hwloc version");
    if (hwloc_topology_set_synthetic(h.get(), "pu:1") != 0 || hwloc_topology_load(h.get()) != 0)
      return std::string("api-") + std::to_string(hwloc_get_api_version());
    const char* v = hwloc_obj_get_info_by_name(hwloc_get_root_obj(h.get()), "hwlocVersion");
    return v ? std::string(v) : "api-" + std::to_string(hwloc_get_api_version());
  }();
  return version;
}

std::string export_this_machine_xml(const Topology& live, const std::string& key) {
  const auto topo = static_cast<hwloc_topology_t>(live.hwloc.get());
  if (!topo || !live.is_this_system) {
    throw Error(live.source, "not a live topology of this machine", "discover it first");
  }
  hwloc_obj_add_info(hwloc_get_root_obj(topo), kCacheKeyInfo, key.c_str());
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(topo, &buffer, &length, 0) != 0 || length <= 0) {
    throw Error(live.source, std::string("hwloc cannot export it as XML: ") + std::strerror(errno),
                "check that libhwloc has XML support");
  }
  std::string xml(buffer, static_cast<size_t>(length - 1));  // length counts the NUL
  hwloc_free_xmlbuffer(topo, buffer);
  return xml;
}

Topology load_this_machine_xml(const std::string& xml, const std::string& name, bool with_io,
                               XmlKey* key) {
  Topology t = load_xml("", xml, name, true, with_io);
  if (key) *key = {root_info(t, kCacheKeyInfo), root_info(t, "hwlocVersion")};
  return t;
}

}  // namespace detail

}  // namespace stoker
