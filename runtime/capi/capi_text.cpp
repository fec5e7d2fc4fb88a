// Text and bytes across the C boundary: what JSON and the error text can hold.
#include <cstdio>

#include "capi.hpp"

namespace stoker::capi {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string shown_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = utf8_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(text[i]));
      out += esc;
      ++i;
    }
  }
  return out;
}

std::string hex_of(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out += digits[static_cast<unsigned char>(c) >> 4];
    out += digits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::string bytes_of_hex(std::string_view hex, const char* what) {
  if (hex.size() % 2 != 0) throw ValueError(std::string(what) + ": not the hex of a path");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw ValueError(std::string(what) + ": not the hex of a path");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::vector<std::string> paths_of(const json& value, const char* what) {
  std::vector<std::string> out;
  for (const json& p : value) out.push_back(bytes_of_hex(p.get<std::string>(), what));
  return out;
}

}  // namespace stoker::capi
