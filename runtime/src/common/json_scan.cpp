#include "stoker/common/json_scan.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace stoker {

namespace {

class Scanner {
 public:
  Scanner(std::string_view s, int max_depth, int keep_depth, std::vector<JsonToken>& out)
      : s_(s), max_depth_(max_depth), keep_depth_(keep_depth), out_(out) {}

  bool document() {
    skip_space();
    if (!value(0, {})) return false;
    skip_space();
    return at_ == s_.size() || fail("text after the JSON value");
  }
  std::string error() const { return "at byte " + std::to_string(at_) + ": " + what_; }

 private:
  bool fail(const char* what) {
    if (what_.empty()) what_ = what;
    return false;
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }
  bool eat(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void push(JsonToken::Kind kind, int depth, std::string_view key, std::string_view text) {
    if (depth <= keep_depth_) out_.push_back({kind, depth, key, text});
  }
  bool literal(std::string_view word, JsonToken::Kind kind, int depth, std::string_view key) {
    if (s_.substr(at_, word.size()) != word) return fail("not a JSON value");
    push(kind, depth, key, s_.substr(at_, word.size()));
    at_ += word.size();
    return true;
  }
  bool value(int depth, std::string_view key) {
    skip_space();
    if (at_ >= s_.size()) return fail("the text ends where a value should be");
    switch (s_[at_]) {
      case '{': return container(depth, key, '}', JsonToken::ObjectStart, JsonToken::ObjectEnd);
      case '[': return container(depth, key, ']', JsonToken::ArrayStart, JsonToken::ArrayEnd);
      case '"': {
        std::string_view raw;
        if (!string(&raw)) return false;
        push(JsonToken::String, depth, key, raw);
        return true;
      }
      case 't': return literal("true", JsonToken::True, depth, key);
      case 'f': return literal("false", JsonToken::False, depth, key);
      case 'n': return literal("null", JsonToken::Null, depth, key);
      default: return number(depth, key);
    }
  }
  bool container(int depth, std::string_view key, char end, JsonToken::Kind open,
                 JsonToken::Kind close) {
    if (depth >= max_depth_) return fail("nests deeper than allowed");
    ++at_;
    const size_t start = out_.size();
    push(open, depth, key, {});
    if (!eat(end)) {
      do {
        std::string_view name;
        if (open == JsonToken::ObjectStart) {
          skip_space();
          if (at_ >= s_.size() || s_[at_] != '"') return fail("a member name is missing");
          if (!string(&name)) return false;
          if (name.find('\\') != std::string_view::npos) return fail("a member name has an escape");
          if (!eat(':')) return fail("':' is missing after a member name");
        }
        if (!value(depth + 1, name)) return false;
      } while (eat(','));
      if (!eat(end)) return fail(end == '}' ? "'}' or ',' is missing" : "']' or ',' is missing");
    }
    if (depth > keep_depth_) return true;
    out_[start].close = static_cast<int>(out_.size());
    push(close, depth, key, {});
    return true;
  }
  // Checks one string from its opening quote; *raw = the content between the quotes.
  bool string(std::string_view* raw) {
    const size_t begin = ++at_;
    while (at_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[at_]);
      if (c == '"') {
        *raw = s_.substr(begin, at_ - begin);
        ++at_;
        return true;
      }
      if (c < 0x20) return fail("a control character in a string");
      if (c == '\\') {
        if (++at_ >= s_.size()) break;
        const char e = s_[at_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (at_ + i >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[at_ + i])))
              return fail("a bad \\u escape");
          }
          at_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos)
          return fail("a bad escape in a string");
        ++at_;
        continue;
      }
      if (c < 0x80) {
        ++at_;
        continue;
      }
      if (!utf8_sequence()) return fail("invalid UTF-8 in a string");
    }
    return fail("a string is not closed");
  }
  bool utf8_sequence() {
    const auto c = static_cast<unsigned char>(s_[at_]);
    const int n = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
    if (n < 0) return false;
    if (at_ + n >= s_.size()) return false;
    uint32_t cp = c & (0x3F >> n);
    for (int i = 1; i <= n; ++i) {
      const auto k = static_cast<unsigned char>(s_[at_ + i]);
      if ((k & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (k & 0x3F);
    }
    const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    at_ += n + 1;
    return true;
  }
  // The hot path of a run record (its timeline is mostly numbers): plain pointer loops.
  bool number(int depth, std::string_view key) {
    const char* const begin = s_.data() + at_;
    const char* const end = s_.data() + s_.size();
    const char* p = begin;
    auto digits = [&] {
      const char* from = p;
      while (p < end && static_cast<unsigned>(*p - '0') < 10) ++p;
      return p > from;
    };
    auto failed = [&](const char* what) {
      at_ = static_cast<size_t>(p - s_.data());
      return fail(what);
    };
    if (p < end && *p == '-') ++p;
    if (p < end && *p == '0') {
      ++p;
    } else if (!digits()) {
      return failed("not a JSON value");
    }
    if (p < end && *p == '.') {
      ++p;
      if (!digits()) return failed("a number has no digits after '.'");
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p < end && (*p == '+' || *p == '-')) ++p;
      if (!digits()) return failed("a number has no exponent digits");
    }
    at_ = static_cast<size_t>(p - s_.data());
    push(JsonToken::Number, depth, key, std::string_view(begin, static_cast<size_t>(p - begin)));
    return true;
  }

  std::string_view s_;
  size_t at_ = 0;
  int max_depth_, keep_depth_;
  std::vector<JsonToken>& out_;
  std::string what_;
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

bool scan_json_into(std::string_view text, int max_depth, std::vector<JsonToken>& tokens,
                    std::string* error, int keep_depth) {
  tokens.clear();
  tokens.reserve(16 + text.size() / 4);  // a run record: a token per ~6 bytes
  Scanner s(text, max_depth, keep_depth, tokens);
  if (s.document()) return true;
  if (error) *error = s.error();
  return false;
}

std::optional<std::vector<JsonToken>> scan_json(std::string_view text, int max_depth,
                                                std::string* error) {
  std::vector<JsonToken> tokens;
  if (!scan_json_into(text, max_depth, tokens, error)) return std::nullopt;
  return tokens;
}

std::string json_string(const JsonToken& t) {
  const std::string_view raw = t.text;
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    if (e != 'u') {
      const char plain[] = {'"', '"', '\\', '\\', '/', '/', 'b', '\b', 'f', '\f', 'n', '\n',
                            'r', '\r', 't', '\t'};
      for (size_t k = 0; k < sizeof plain; k += 2)
        if (plain[k] == e) out += plain[k + 1];
      continue;
    }
    uint32_t cp = 0;
    std::from_chars(raw.data() + i + 1, raw.data() + i + 5, cp, 16);
    i += 4;
    // A surrogate pair is one code point; a lone surrogate becomes U+FFFD.
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < raw.size() && raw[i + 1] == '\\' &&
        raw[i + 2] == 'u') {
      uint32_t low = 0;
      std::from_chars(raw.data() + i + 3, raw.data() + i + 7, low, 16);
      if (low >= 0xDC00 && low < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        i += 6;
      }
    }
    if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
    append_utf8(out, cp);
  }
  return out;
}

std::optional<uint64_t> json_whole(const JsonToken& t) {
  if (t.kind != JsonToken::Number) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || end != t.text.data() + t.text.size()) return std::nullopt;
  return v;
}

std::optional<double> json_number(const JsonToken& t) {
  if (t.kind != JsonToken::Number) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || end != t.text.data() + t.text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

}  // namespace stoker
