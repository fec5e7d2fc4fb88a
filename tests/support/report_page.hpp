// What `stoker report --html` wrote, as the report tests look at it.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

namespace stoker::test {

// The page's text, and how many plot lines (<polyline>: one per rank shown) it draws.
inline std::string read_page(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline size_t polylines_of(const std::string& html) {
  size_t n = 0;
  for (size_t at = html.find("<polyline"); at != std::string::npos;
       at = html.find("<polyline", at + 1))
    ++n;
  return n;
}

}  // namespace stoker::test
