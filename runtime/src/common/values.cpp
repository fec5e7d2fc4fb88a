#include "stoker/common/values.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace stoker::values {

namespace {
bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

std::optional<uint64_t> parse_whole(std::string_view s, uint64_t lo, uint64_t hi) {
  if (!all_digits(s)) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);  // ec: out of range
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  // No sign either: from_chars takes none for an unsigned type.
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 32 || s == ".") return std::nullopt;
  int dots = 0;
  for (char c : s) {
    if (c == '.')
      ++dots;
    else if (c < '0' || c > '9')
      return std::nullopt;
  }
  if (dots > 1) return std::nullopt;
  std::string text(s);  // from_chars wants a digit first for ".5"
  if (text.front() == '.') text.insert(text.begin(), '0');
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> parse_fraction(std::string_view s) {
  auto v = parse_decimal(s);
  if (!v || *v <= 0.0 || *v > 1.0) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_size(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && ((s[digits] >= '0' && s[digits] <= '9') || s[digits] == '.'))
    ++digits;
  std::string_view number = s.substr(0, digits), suffix = s.substr(digits);
  double scale = 1;
  static constexpr std::string_view kShort[] = {"K", "M", "G", "T"};
  static constexpr std::string_view kLong[] = {"KiB", "MiB", "GiB", "TiB"};
  bool known = suffix.empty() || suffix == "B";
  for (int i = 0; i < 4 && !known; ++i) {
    if (suffix == kShort[i] || suffix == kLong[i]) {
      scale = std::ldexp(1.0, 10 * (i + 1));
      known = true;
    }
  }
  if (!known) return std::nullopt;
  if (scale == 1 && number.find('.') != std::string_view::npos) return std::nullopt;
  if (scale == 1) {
    auto v = parse_whole(number);
    if (!v || *v == 0) return std::nullopt;
    return v;
  }
  auto v = parse_decimal(number);
  if (!v) return std::nullopt;
  double bytes = std::floor(*v * scale);
  if (bytes < 1 || bytes >= 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

std::optional<bool> parse_yes_no(std::string_view s) {
  if (s == "yes") return true;
  if (s == "no") return false;
  return std::nullopt;
}

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  char buf[48];
  if (unit == 0 || v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[unit]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string format_fraction(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : std::to_string(v);
}

}  // namespace stoker::values
