#include "sources/npy_header.hpp"

#include <cstring>
#include <string_view>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw Error(path, "malformed .npy header: " + what, "re-save the array with numpy.save");
}

// The text after "'key':" (blanks skipped), or "" when the key is absent.
std::string_view value_of(std::string_view dict, std::string_view key) {
  const std::string quoted = "'" + std::string(key) + "':";
  const size_t at = dict.find(quoted);
  if (at == std::string_view::npos) return {};
  std::string_view v = dict.substr(at + quoted.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

}  // namespace

std::optional<NpyHeader> parse_npy_header(std::span<const std::byte> bytes,
                                          const std::string& path) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 6 || std::memcmp(b, "\x93NUMPY", 6) != 0) return std::nullopt;
  if (bytes.size() < 12) malformed(path, "the file ends inside it");
  const unsigned major = b[6];
  if (major < 1 || major > 3) malformed(path, "format version " + std::to_string(major));
  const size_t len_bytes = major == 1 ? 2 : 4;
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= uint64_t{b[8 + i]} << (8 * i);
  NpyHeader h;
  h.data_offset = 8 + len_bytes + header_len;
  if (h.data_offset > bytes.size()) malformed(path, "the file ends inside it");
  const std::string_view dict(reinterpret_cast<const char*>(b) + 8 + len_bytes, header_len);
  std::string_view descr = value_of(dict, "descr");
  if (descr.size() < 2 || descr.front() != '\'') malformed(path, "no 'descr'");
  descr.remove_prefix(1);
  h.descr = std::string(descr.substr(0, descr.find('\'')));
  h.fortran_order = value_of(dict, "fortran_order").starts_with("True");
  std::string_view shape = value_of(dict, "shape");
  if (shape.empty() || shape.front() != '(') malformed(path, "no 'shape'");
  shape = shape.substr(1, shape.find(')') - 1);      // "1000000," or "10, 20" or ""
  if (shape.ends_with(',')) shape.remove_suffix(1);  // a 1-d shape: "(1000000,)"
  if (auto n = values::parse_whole(shape)) h.length = *n;
  return h;
}

}  // namespace stoker
