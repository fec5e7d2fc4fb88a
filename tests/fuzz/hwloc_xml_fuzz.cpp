// The hwloc XML the plugin caches (and an admin's topology_xml=): hwloc's parser, then
// stoker's conversion of whatever hwloc accepted into the planner's Topology.
#include "fuzz_support.hpp"
#include "stoker/topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  fuzz::expect_clean([&] {
    const Topology t = load_topology_xml_text(std::string(fuzz::as_text(data, size)), "fuzz.xml");
    for (const NumaNode& n : t.numa_nodes) (void)t.numa_distance(n.os_index, n.os_index);
    (void)t.smt_width();
  });
  return 0;
}
