// Private: what the topology cache (topology_cache.cpp) needs from hwloc: this node's own
// topology written out as XML with its cache key inside, and read back as "this system".
#pragma once

#include <string>

#include "stoker/topology/topology.hpp"

namespace stoker::detail {

// The root info that carries the cache key inside the XML.
inline constexpr const char* kCacheKeyInfo = "StokerTopologyCacheKey";

// The running libhwloc's release ("2.9.0").
std::string hwloc_runtime_version();

// `live` (from load_topology) as hwloc XML, with `key` recorded in the root's infos.
// Throws stoker::Error when hwloc cannot export it.
std::string export_this_machine_xml(const Topology& live, const std::string& key);

// What an XML says about itself: the cache key recorded in it ("" when none) and the hwloc
// release that discovered it.
struct XmlKey {
  std::string cache_key, hwloc_version;
};

// Loads XML this machine's own discovery wrote: binding works with it and the allowed CPUs
// are this process's. `with_io` false drops the I/O objects. Fills `key` when given.
// Throws stoker::Error naming `name` when the text is not a valid topology.
Topology load_this_machine_xml(const std::string& xml, const std::string& name, bool with_io,
                               XmlKey* key);

}  // namespace stoker::detail
