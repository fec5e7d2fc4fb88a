#include "env_number.hpp"

#include <charconv>
#include <string>

#include "stoker/error.hpp"

namespace stoker::distributed {

std::optional<uint64_t> env_number(const char* name, const char* value) {
  if (value == nullptr) return std::nullopt;
  const std::string_view text(value);
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw Error(name, "'" + std::string(text) + "' is not a whole number",
                "unset it or set it to a number such as 0");
  }
  return out;
}

}  // namespace stoker::distributed
