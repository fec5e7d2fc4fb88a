// The profiles file parser (format in profiles.hpp and docs/admin-guide.md, "Profiles and caps").
// Strict on purpose: a typo in an admin file must be an error that points at the word, never a
// silently ignored setting.
#include <strings.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker {

namespace {

struct Word {
  std::string raw;  // as written, quotes included
  int col = 1;      // 1-based byte column of its first character
};

template <typename Target>
struct KeySpec {
  const char* key;
  std::string expects;                                   // what is allowed, for the error message
  std::function<bool(Target&, std::string_view)> apply;  // false on a bad value
};

template <typename Target, typename T, typename Parse>
KeySpec<Target> spec(const char* key, std::string expects, T Target::*member, Parse parse) {
  return {key, std::move(expects), [member, parse](Target& t, std::string_view v) {
            auto parsed = parse(v);
            if (!parsed) return false;
            t.*member = static_cast<T>(*parsed);
            return true;
          }};
}

auto whole(uint64_t lo, uint64_t hi) {
  return [lo, hi](std::string_view v) { return values::parse_whole(v, lo, hi); };
}
// A whole-number key whose message states the bounds it checks (limits.hpp).
template <typename Target, typename T>
KeySpec<Target> whole_spec(const char* key, T Target::*member, uint64_t lo, uint64_t hi,
                           const char* of = "") {
  return spec(key,
              std::string("a whole number ") + of + "from " + std::to_string(lo) + " to " +
                  std::to_string(hi),
              member, whole(lo, hi));
}
auto fraction() {
  return [](std::string_view v) { return values::parse_fraction(v); };
}
auto yes_no() {
  return [](std::string_view v) { return values::parse_yes_no(v); };
}

const std::vector<KeySpec<Profile>>& profile_keys() {
  static const std::vector<KeySpec<Profile>> keys = {
      {"Description", "any text (quote it when it has spaces)",
       [](Profile& p, std::string_view v) {
         p.description = std::string(v);
         return true;
       }},
      spec("WorkerFraction", "a fraction in (0,1], e.g. 0.75", &Profile::worker_fraction,
           fraction()),
      whole_spec("MainCores", &Profile::main_cores, 1, limits::kMaxMainCores),
      whole_spec("PrefetchPerWorker", &Profile::prefetch_per_worker, 1,
                 limits::kMaxPrefetchPerWorker),
      whole_spec("MinPrefetch", &Profile::min_prefetch, 1, limits::kMaxPrefetch),
      whole_spec("MaxPrefetch", &Profile::max_prefetch, 1, limits::kMaxPrefetch),
      spec("MemShare", "a fraction in (0,1], e.g. 0.25", &Profile::mem_share, fraction()),
      spec("PinMemory", names_of(kPinModeNames), &Profile::pin_memory, parse_pin_mode),
      {"MaxReaders", "none or a whole number from 1 to 1024",
       [](Profile& p, std::string_view v) {
         if (v == "none") {
           p.max_readers = 0;
           return true;
         }
         auto n = values::parse_whole(v, 1, limits::kMaxWorkers);
         if (n) p.max_readers = static_cast<int>(*n);
         return n.has_value();
       }},
      spec("SmtAsCores", "yes or no", &Profile::smt_as_cores, yes_no()),
      spec("SpillCores", "yes or no", &Profile::spill_cores, yes_no()),
      spec("BatchBytes", "a size in bytes such as 64M or 1GiB (K, M, G, T = KiB, MiB, GiB, TiB)",
           &Profile::batch_bytes, [](std::string_view v) { return values::parse_size(v); }),
      spec("Stream", "yes or no", &Profile::stream, yes_no()),
      whole_spec("ShuffleBuffer", &Profile::shuffle_buffer, 1, limits::kMaxShuffleBuffer,
                 "of samples "),
  };
  return keys;
}

const std::vector<KeySpec<Caps>>& caps_keys() {
  static const std::vector<KeySpec<Caps>> keys = {
      {"DefaultProfile", "a profile name (letters, digits, '-', '_')",
       [](Caps& c, std::string_view v) {
         if (!values::valid_name(v)) return false;
         c.default_profile = std::string(v);
         return true;
       }},
      spec("MaxWorkerFraction", "a fraction in (0,1], e.g. 0.9", &Caps::max_worker_fraction,
           fraction()),
      whole_spec("MaxPrefetch", &Caps::max_prefetch, 1, limits::kMaxPrefetch),
      spec("MaxMemShare", "a fraction in (0,1], e.g. 0.5", &Caps::max_mem_share, fraction()),
      spec("AllowOverride", "yes or no", &Caps::allow_override, yes_no()),
  };
  return keys;
}

template <typename Target>
std::string key_list(const std::vector<KeySpec<Target>>& keys) {
  std::string out;
  for (const auto& k : keys) out += std::string(out.empty() ? "" : ", ") + k.key;
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  ProfileSet run() {
    set_ = builtin_profiles();
    size_t pos = 0;
    while (pos <= text_.size()) {
      size_t nl = text_.find('\n', pos);
      std::string_view line = text_.substr(pos, nl == text_.npos ? text_.npos : nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      parse_line(line);
      if (nl == text_.npos) break;
      pos = nl + 1;
    }
    if (!set_.has(set_.caps.default_profile))
      throw Error(where(default_line_, default_col_),
                  "DefaultProfile=" + set_.caps.default_profile + " names no profile",
                  "known profiles: " + set_.names());
    return set_;
  }

 private:
  std::string where(int line, int col) const {
    return file_ + ":" + std::to_string(line) + ":" + std::to_string(col);
  }
  [[noreturn]] void fail(int col, std::string what, std::string todo) const {
    throw Error(where(line_no_, col), std::move(what), std::move(todo));
  }

  std::vector<Word> split(std::string_view line) const {
    std::vector<Word> words;
    bool in_word = false, quoted = false;
    int quote_col = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      int col = static_cast<int>(i) + 1;
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        fail(col, std::string("unexpected control character ") + hex,
             "use plain text; '#' starts a comment");
      }
      if (!quoted && (c == ' ' || c == '\t')) {
        in_word = false;
        continue;
      }
      if (!quoted && c == '#') break;
      if (!in_word) {
        words.push_back({"", col});
        in_word = true;
      }
      if (c == '"') {
        quoted = !quoted;
        quote_col = col;
      }
      words.back().raw += static_cast<char>(c);
    }
    if (quoted)
      fail(quote_col, "unterminated quote in '" + words.back().raw + "'",
           "close the quote on the same line");
    return words;
  }

  // Splits "Key=Value", removing the quotes around a quoted value.
  std::pair<std::string_view, std::string_view> key_value(const Word& w) const {
    size_t eq = w.raw.find('=');
    if (eq == std::string::npos || eq == 0)
      fail(w.col, "'" + w.raw + "' is not Key=Value",
           "write each setting as Key=Value with no spaces around '='");
    std::string_view key = std::string_view(w.raw).substr(0, eq);
    std::string_view value = std::string_view(w.raw).substr(eq + 1);
    if (key.find('"') != key.npos)
      fail(w.col, "misplaced quote in '" + w.raw + "'", "quote a whole value: Key=\"some text\"");
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
      if (value.find('"') != value.npos)
        fail(w.col, "misplaced quote in '" + w.raw + "'", "a quoted value cannot hold a quote");
    } else if (value.find('"') != value.npos) {
      fail(w.col, "misplaced quote in '" + w.raw + "'", "quote a whole value: Key=\"some text\"");
    }
    return {key, value};
  }

  template <typename Target>
  void apply_words(const std::vector<Word>& words, size_t first,
                   const std::vector<KeySpec<Target>>& keys, const char* line_kind,
                   Target& target) {
    std::map<std::string, int, std::less<>> seen;  // key -> column
    for (size_t i = first; i < words.size(); ++i) {
      auto [key, value] = key_value(words[i]);
      // (the binding by copy: clang before 16, the fuzz build's, cannot capture a binding)
      auto it = std::find_if(keys.begin(), keys.end(),
                             [key = key](const auto& k) { return key == k.key; });
      if (it == keys.end()) {
        std::string todo = std::string("allowed on a ") + line_kind + " line: " + key_list(keys);
        for (const auto& k : keys)
          if (key.size() == std::string_view(k.key).size() &&
              strncasecmp(key.data(), k.key, key.size()) == 0)
            todo += "; keys are case-sensitive: write " + std::string(k.key);
        fail(words[i].col, "unknown key '" + std::string(key) + "' in '" + words[i].raw + "'",
             todo);
      }
      if (auto s = seen.find(key); s != seen.end())
        fail(words[i].col,
             "'" + std::string(key) + "' is given twice on this line (first at column " +
                 std::to_string(s->second) + ")",
             "keep one " + std::string(key) + "=...");
      seen.emplace(std::string(key), words[i].col);
      if (!it->apply(target, value))
        fail(words[i].col, "bad value in '" + words[i].raw + "'",
             std::string(it->key) + " expects " + it->expects);
      if constexpr (std::is_same_v<Target, Caps>) {
        if (key == "DefaultProfile") {
          default_line_ = line_no_;
          default_col_ = words[i].col;
        }
      }
    }
  }

  void parse_line(std::string_view line) {
    std::vector<Word> words = split(line);
    if (words.empty()) return;
    const Word& head = words.front();
    if (head.raw == "Defaults") {
      if (set_.caps_line != 0)
        fail(head.col,
             "a second Defaults line (the first is at line " + std::to_string(set_.caps_line) + ")",
             "put all caps on one Defaults line");
      set_.caps_line = line_no_;
      apply_words(words, 1, caps_keys(), "Defaults", set_.caps);
      return;
    }
    if (head.raw.rfind("Profile=", 0) != 0) {
      std::string todo = "a line is 'Profile=NAME Key=Value ...' or 'Defaults Key=Value ...'";
      if (strncasecmp(head.raw.c_str(), "profile=", 8) == 0 ||
          strcasecmp(head.raw.c_str(), "defaults") == 0)
        todo += "; keys are case-sensitive";
      fail(head.col, "unexpected '" + head.raw + "' at the start of a line", todo);
    }
    auto [key, name] = key_value(head);
    if (!values::valid_name(name))
      fail(head.col, "bad profile name in '" + head.raw + "'",
           "a name is 1-64 letters, digits, '-' or '_'");
    std::string profile_name(name);
    if (auto prev = set_.file_lines.find(profile_name); prev != set_.file_lines.end())
      fail(head.col,
           "profile '" + profile_name + "' is defined twice (first at line " +
               std::to_string(prev->second) + ")",
           "keep one Profile=" + profile_name + " line");
    set_.file_lines[profile_name] = line_no_;
    // A new profile starts from the built-in of its name, else from built-in balanced.
    static const ProfileSet builtins = builtin_profiles();
    Profile p = builtins.has(profile_name) ? builtins.get(profile_name) : builtins.get("balanced");
    if (!builtins.has(profile_name)) p.description.clear();
    p.name = profile_name;
    apply_words(words, 1, profile_keys(), "Profile", p);
    if (std::string problem = check_profile(p); !problem.empty())
      fail(head.col, "profile '" + profile_name + "': " + problem,
           "change the values on this line (keys not given keep the base profile's values)");
    set_.profiles[profile_name] = std::move(p);
  }

  std::string_view text_;
  const std::string& file_;
  ProfileSet set_;
  int line_no_ = 0;
  int default_line_ = 0, default_col_ = 0;  // where DefaultProfile was set (0: built-in)
};

}  // namespace

ProfileSet parse_profiles(std::string_view text, const std::string& filename) {
  return Parser(text, filename).run();
}

}  // namespace stoker
