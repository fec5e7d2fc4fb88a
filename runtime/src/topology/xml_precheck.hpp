// Private: a check of hwloc XML that stoker makes before hwloc reads it. hwloc 2.9 itself
// crashes (a NULL bitmap in hwloc_bitmap_compare_first, inside hwloc_topology_load) on an
// object that has a cpuset but no complete_cpuset, and the plugin reads XML inside
// slurmstepd (an admin's topology_xml=, its cache): found by the fuzz target hwloc_xml.
#pragma once

#include <string>
#include <string_view>

namespace stoker::detail {

// Throws stoker::Error naming `name` (and, in its message, the line) of the first <object>
// that has a cpuset without a complete_cpuset, or a nodeset without a complete_nodeset.
void precheck_hwloc_xml(std::string_view xml, const std::string& name);

}  // namespace stoker::detail
