#include "stoker/common/json_scan.hpp"

#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

namespace stoker {

namespace {

// Plain string bytes: printable ASCII other than '"' and '\\' (the loop's fast case).
constexpr auto kPlainStringByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// How many of the 8 bytes at `p` are ASCII digits before the first that is not. A byte is a
// digit when its high nibble is 3 before and after adding 6 ('0'-'9' only). Adding 6 can
// carry into the next byte only from a byte of 0xFA or more, which is no digit: the count
// stops there anyway.
size_t leading_digits(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0, kThree = 0x3030303030303030,
                     kSix = 0x0606060606060606;
  const uint64_t not_digit = ((v & kHigh) ^ kThree) | (((v + kSix) & kHigh) ^ kThree);
  if (not_digit == 0) return 8;
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<size_t>(std::countr_zero(not_digit)) / 8;
  } else {
    return static_cast<size_t>(std::countl_zero(not_digit)) / 8;
  }
}

// A checker over raw pointers, without recursion: `stoker report` runs it over every byte of a
// job log (a gigabyte and more), so the hot paths (a plain byte in a string, a digit, a
// value's first byte) are a compare or a table look-up each.
class Scanner {
 public:
  Scanner(std::string_view s, int max_depth, int keep_depth, std::vector<JsonToken>& out)
      : begin_(s.data()),
        p_(s.data()),
        end_(s.data() + s.size()),
        max_depth_(max_depth),
        keep_depth_(keep_depth),
        out_(out) {}

  // One loop, no recursion: a value, then the ',' or the ends of containers after it. The
  // open containers are a stack of frames (bounded by max_depth).
  bool document() {
    std::string_view key;  // the member name of the value about to be read ("" in arrays)
    while (true) {
      skip_space();
      if (p_ >= end_) return fail("the text ends where a value should be");
      const char c = *p_;
      if (c == '{' || c == '[') {
        if (!open(c == '{', key)) return false;
        if (eat(c == '{' ? '}' : ']')) {
          close();
        } else {
          if (c == '[') key = {};
          if (c == '{' && !member_name(&key)) return false;
          continue;
        }
      } else if (!scalar(key)) {
        return false;
      }
      // After a value: ',' and the next one, or the ends of the containers it closes.
      bool more = false;
      while (!frames_.empty() && !more) {
        const bool object = frames_.back().object;
        skip_space();
        const char next = p_ < end_ ? *p_ : '\0';
        if (next == ',') {
          ++p_;
          key = {};
          if (object && !member_name(&key)) return false;
          more = true;
        } else if (next == (object ? '}' : ']')) {
          ++p_;
          close();
        } else {
          return fail(object ? "'}' or ',' is missing" : "']' or ',' is missing");
        }
      }
      if (!more) {
        skip_space();
        return p_ == end_ || fail("text after the JSON value");
      }
    }
  }
  std::string error() const { return "at byte " + std::to_string(p_ - begin_) + ": " + what_; }

 private:
  bool fail(const char* what) {
    if (what_.empty()) what_ = what;
    return false;
  }
  // stoker writes no whitespace: the usual case is one compare. (The hot loops work on a
  // local pointer: the member could alias the tokens' pointers, so it would be reloaded.)
  void skip_space() {
    if (p_<end_&& static_cast<unsigned char>(*p_)> ' ') return;
    const char* p = p_;
    while (p < end_ && static_cast<unsigned char>(*p) <= ' ' &&
           (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      ++p;
    p_ = p;
  }
  bool eat(char c) {
    skip_space();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  std::string_view view(const char* from, const char* to) const {
    return {from, static_cast<size_t>(to - from)};
  }
  [[gnu::always_inline]] void push(JsonToken::Kind kind, int depth, std::string_view key,
                                   std::string_view text) {
    if (depth <= keep_depth_) out_.push_back({kind, depth, key, text});
  }
  bool literal(std::string_view word, JsonToken::Kind kind, int depth, std::string_view key) {
    if (static_cast<size_t>(end_ - p_) < word.size() || view(p_, p_ + word.size()) != word)
      return fail("not a JSON value");
    push(kind, depth, key, view(p_, p_ + word.size()));
    p_ += word.size();
    return true;
  }
  int depth() const { return static_cast<int>(frames_.size()); }
  // A string, number, true, false or null, at the current depth.
  bool scalar(std::string_view key) {
    switch (*p_) {
      case '"': {
        std::string_view raw;
        if (!string(&raw)) return false;
        push(JsonToken::String, depth(), key, raw);
        return true;
      }
      case 't':
        return literal("true", JsonToken::True, depth(), key);
      case 'f':
        return literal("false", JsonToken::False, depth(), key);
      case 'n':
        return literal("null", JsonToken::Null, depth(), key);
      default:
        return number(depth(), key);
    }
  }
  bool open(bool object, std::string_view key) {
    if (depth() >= max_depth_) return fail("nests deeper than allowed");
    ++p_;
    frames_.push_back({out_.size(), key, object});
    push(object ? JsonToken::ObjectStart : JsonToken::ArrayStart, depth() - 1, key, {});
    return true;
  }
  void close() {
    const Frame f = frames_.back();
    frames_.pop_back();
    if (depth() > keep_depth_) return;
    out_[f.start].close = static_cast<int>(out_.size());
    push(f.object ? JsonToken::ObjectEnd : JsonToken::ArrayEnd, depth(), f.key, {});
  }
  bool member_name(std::string_view* name) {
    skip_space();
    if (p_ >= end_ || *p_ != '"') return fail("a member name is missing");
    if (!string(name)) return false;
    if (name->find('\\') != std::string_view::npos) return fail("a member name has an escape");
    if (!eat(':')) return fail("':' is missing after a member name");
    return true;
  }
  // Checks one string from its opening quote; *raw = the content between the quotes.
  bool string(std::string_view* raw) {
    const char* const begin = ++p_;
    while (true) {
      const char* p = p_;
      while (p < end_ && kPlainStringByte[static_cast<unsigned char>(*p)]) ++p;
      p_ = p;
      if (p_ >= end_) break;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *raw = view(begin, p_);
        ++p_;
        return true;
      }
      if (c < 0x20) return fail("a control character in a string");
      if (c == '\\') {
        if (++p_ >= end_) break;
        const char e = *p_;
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (end_ - p_ <= i || !std::isxdigit(static_cast<unsigned char>(p_[i])))
              return fail("a bad \\u escape");
          }
          p_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos)
          return fail("a bad escape in a string");
        ++p_;
        continue;
      }
      if (!utf8_sequence()) return fail("invalid UTF-8 in a string");
    }
    return fail("a string is not closed");
  }
  bool utf8_sequence() {
    const auto c = static_cast<unsigned char>(*p_);
    const int n = c >= 0xC2 && c <= 0xDF   ? 1
                  : c >= 0xE0 && c <= 0xEF ? 2
                  : c >= 0xF0 && c <= 0xF4 ? 3
                                           : -1;
    if (n < 0) return false;
    if (end_ - p_ <= n) return false;
    uint32_t cp = c & (0x3F >> n);
    for (int i = 1; i <= n; ++i) {
      const auto k = static_cast<unsigned char>(p_[i]);
      if ((k & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (k & 0x3F);
    }
    const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p_ += n + 1;
    return true;
  }
  // The hot path of a run record (its timeline is mostly numbers).
  bool number(int depth, std::string_view key) {
    const char* const begin = p_;
    const char* const end = end_;
    const char* p = begin;
    auto digits = [&] {
      const char* from = p;
      while (end - p >= 8) {  // eight bytes at a time: most numbers are one step
        const size_t n = leading_digits(p);
        p += n;
        if (n < 8) return p > from;
      }
      while (p < end && static_cast<unsigned>(*p - '0') < 10) ++p;
      return p > from;
    };
    auto failed = [&](const char* what) {
      p_ = p;
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
    p_ = p;
    push(JsonToken::Number, depth, key, view(begin, p));
    return true;
  }

  const char* const begin_;
  const char* p_;
  const char* const end_;
  int max_depth_, keep_depth_;
  std::vector<JsonToken>& out_;
  struct Frame {
    size_t start;  // its start token (when kept)
    std::string_view key;
    bool object;
  };
  std::vector<Frame> frames_;  // the open containers, outermost first
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
      const char plain[] = {'"', '"',  '\\', '\\', '/', '/',  'b', '\b',
                            'f', '\f', 'n',  '\n', 'r', '\r', 't', '\t'};
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
