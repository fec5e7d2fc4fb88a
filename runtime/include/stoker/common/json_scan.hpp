// A strict, fast JSON reader for stoker's own one-line documents (run records, job log
// lines): it checks the whole text against RFC 8259 (UTF-8 included) and lists its values as
// tokens pointing into the text, without building a tree. `stoker report` reads a million
// log lines in seconds with it, where a tree-building parser takes minutes; the plugin
// reads user-written records with it as root, so it is bounded (size, depth) and total.
// simdjson was measured against it on `stoker report` and lost (docs/benchmarks.md, "The JSON
// check").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

struct JsonToken {
  enum Kind { ObjectStart, ObjectEnd, ArrayStart, ArrayEnd, String, Number, True, False, Null };
  Kind kind = Null;
  int depth = 0;          // 0: the document itself
  std::string_view key;   // the member name (raw, unescaped only when it has no '\'), or ""
  std::string_view text;  // a string's raw content (without quotes), a number's digits
  int close = -1;         // ObjectStart/ArrayStart: the index of its end token
};

// Tokens of `text`, in document order; nullopt (and `error`: "at byte N: what") when the
// text is not one JSON value, nests deeper than `max_depth`, or has a member name with an
// escape (stoker's documents have none).
std::optional<std::vector<JsonToken>> scan_json(std::string_view text, int max_depth,
                                                std::string* error);
// The same into `tokens` (cleared first; a caller reading many lines keeps its capacity).
// Values deeper than `keep_depth` are checked but get no token: a container at keep_depth
// then reads as empty (a caller that skips a big array need not pay for its tokens).
bool scan_json_into(std::string_view text, int max_depth, std::vector<JsonToken>& tokens,
                    std::string* error, int keep_depth = 1 << 30);

// A String token's value with its escapes resolved (scan_json already checked them).
std::string json_string(const JsonToken& t);
// A Number token as a whole number / a double; nullopt when it is not one (or overflows).
std::optional<uint64_t> json_whole(const JsonToken& t);
std::optional<double> json_number(const JsonToken& t);

}  // namespace stoker
