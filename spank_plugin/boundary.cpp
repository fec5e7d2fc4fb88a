#include "boundary.hpp"

#include "stoker/common/error.hpp"

namespace stoker::spank {

std::string boundary_line(std::string_view callback, const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  if (error && !error->where().empty()) return std::string("stoker: ") + e.what();
  return "stoker: " + std::string(callback) + ": " + e.what();
}

}  // namespace stoker::spank
