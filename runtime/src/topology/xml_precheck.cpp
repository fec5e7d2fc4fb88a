#include "topology/xml_precheck.hpp"

#include <algorithm>

#include "stoker/common/error.hpp"

namespace stoker::detail {

namespace {

// Whether the tag's text holds the attribute `name` (preceded by white space, followed by
// '=' after optional white space): "cpuset" is not found in "complete_cpuset=".
bool has_attribute(std::string_view tag, std::string_view name) {
  for (size_t at = tag.find(name); at != std::string_view::npos; at = tag.find(name, at + 1)) {
    const bool starts = at > 0 && (tag[at - 1] == ' ' || tag[at - 1] == '\t' ||
                                   tag[at - 1] == '\n' || tag[at - 1] == '\r');
    size_t after = at + name.size();
    while (after < tag.size() && (tag[after] == ' ' || tag[after] == '\t')) ++after;
    if (starts && after < tag.size() && tag[after] == '=') return true;
  }
  return false;
}

}  // namespace

void precheck_hwloc_xml(std::string_view xml, const std::string& name) {
  for (size_t at = xml.find("<object"); at != std::string_view::npos;
       at = xml.find("<object", at + 1)) {
    const size_t end = xml.find('>', at);
    const std::string_view tag = xml.substr(at, end == std::string_view::npos ? end : end - at);
    for (const auto& [set, complete] :
         {std::pair{"cpuset", "complete_cpuset"}, std::pair{"nodeset", "complete_nodeset"}}) {
      if (has_attribute(tag, set) && !has_attribute(tag, complete)) {
        const auto line = 1 + std::count(xml.begin(), xml.begin() + static_cast<long>(at), '\n');
        throw Error(name,
                    "not a valid hwloc XML topology: the object on line " + std::to_string(line) +
                        " has a " + set + " but no " + complete + " (hwloc would crash reading it)",
                    "export the topology again with `lstopo-no-graphics --of xml FILE.xml`");
      }
    }
  }
}

}  // namespace stoker::detail
