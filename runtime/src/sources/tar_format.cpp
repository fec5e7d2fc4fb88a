#include "sources/tar_format.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "sources/image_names.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker::tar {

namespace {

// A numeric header field: octal text, or GNU base-256 when the top bit is set.
bool parse_number(const char* field, size_t n, uint64_t& out) {
  const auto* u = reinterpret_cast<const unsigned char*>(field);
  out = 0;
  if (u[0] & 0x80) {
    for (size_t i = 1; i < n; ++i) out = (out << 8) | u[i];
    return (u[0] & 0x7f) == 0;  // no negative or > 2^64 sizes
  }
  size_t i = 0;
  while (i < n && (field[i] == ' ' || field[i] == '\0')) ++i;
  bool any = false;
  for (; i < n && field[i] >= '0' && field[i] <= '7'; ++i, any = true)
    out = out * 8 + (field[i] - '0');
  for (; i < n; ++i) {
    if (field[i] != ' ' && field[i] != '\0') return false;
  }
  return any;
}

bool checksum_ok(const unsigned char* h) {
  uint64_t stored = 0;
  if (!parse_number(reinterpret_cast<const char*>(h) + 148, 8, stored)) return false;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
  return sum == stored;
}

std::string field(const unsigned char* h, size_t off, size_t n) {
  const char* p = reinterpret_cast<const char*>(h) + off;
  return std::string(p, strnlen(p, n));
}

// The record `key` of a PAX extended header ("LEN key=VALUE\n" records), or "".
std::string pax_record(const std::string& data, std::string_view key) {
  size_t pos = 0;
  while (pos < data.size()) {
    const size_t space = data.find(' ', pos);
    if (space == std::string::npos) break;
    const auto len =
        values::parse_whole(std::string_view(data).substr(pos, space - pos), 1, data.size() - pos);
    if (!len || space + 2 > pos + *len) break;
    const std::string_view rec(data.data() + space + 1, pos + *len - (space + 1));
    if (rec.size() > key.size() + 1 && rec.starts_with(key) && rec[key.size()] == '=') {
      return std::string(rec.substr(key.size() + 1, rec.size() - key.size() - 2));
    }
    pos += *len;
  }
  return {};
}

}  // namespace

std::string at(const std::string& shard, uint64_t offset) {
  return shard + "@" + std::to_string(offset);
}

bool is_end_block(const unsigned char* block) {
  return std::all_of(block, block + kBlock, [](unsigned char c) { return c == 0; });
}

Header parse_header(const unsigned char* h, const std::string& where) {
  if (!checksum_ok(h)) {
    throw Error(where, "bad tar header checksum (corrupt or not a tar file)",
                "re-create or re-download the shard");
  }
  Header out;
  if (!parse_number(reinterpret_cast<const char*>(h) + 124, 12, out.size)) {
    throw Error(where, "bad member size field in the tar header");
  }
  out.type = static_cast<char>(h[156]);
  out.name = field(h, 0, 100);
  out.link = field(h, 157, 100);
  // The prefix field is POSIX ustar's ("ustar\0"); GNU headers ("ustar  ") keep times there.
  const std::string prefix = field(h, 345, 155);
  if (!prefix.empty() && std::memcmp(h + 257, "ustar\0", 6) == 0) {
    out.name = prefix + "/" + out.name;
  }
  return out;
}

void read_long_names(char type, const std::string& data, LongNames& into) {
  if (type == 'L') into.name = data.c_str();
  if (type == 'K') into.link = data.c_str();
  if (type != 'x') return;
  if (std::string path = pax_record(data, "path"); !path.empty()) into.name = std::move(path);
  if (std::string link = pax_record(data, "linkpath"); !link.empty()) into.link = std::move(link);
}

std::pair<std::string_view, std::string_view> split_key(std::string_view name) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.find('.', slash == std::string_view::npos ? 0 : slash + 1);
  if (dot == std::string_view::npos) return {name, {}};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

int label_rank(std::string_view ext) {
  if (equals_ignoring_case(ext, "cls")) return 1;
  if (equals_ignoring_case(ext, "cls2")) return 2;
  if (equals_ignoring_case(ext, "txt")) return 3;
  return 0;
}

int64_t parse_label(std::string_view text, const std::string& shard, uint64_t offset,
                    const std::string& member) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  const char* todo =
      "labels are class indices from 0 to 2147483647; pass labels=false "
      "(--no-labels) for shards without class labels";
  int64_t value = 0;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool number = !text.empty() && stop == text.data() + text.size() &&
                      (ec == std::errc() || ec == std::errc::result_out_of_range);
  if (number && ec == std::errc() && value >= 0 && value <= INT32_MAX) return value;
  const std::string shown(text.substr(0, 40));
  if (!number) {
    throw Error(at(shard, offset),
                "label member '" + member + "' is not an integer: '" + shown + "'", todo);
  }
  throw Error(at(shard, offset),
              "label member '" + member + "' holds " + shown + ", outside 0..2147483647", todo);
}

}  // namespace stoker::tar
