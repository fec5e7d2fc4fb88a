#include "sources/folder_listing.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "common/fnv1a.hpp"
#include "sources/cache_dir.hpp"

namespace stoker {

std::optional<FolderStamp> folder_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FolderStamp f;
  f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  f.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.device = static_cast<uint64_t>(st.st_dev);
  return f;
}

namespace fs = std::filesystem;

namespace {

// Bumped whenever what a walk finds changes (the image extensions, the order, the hash).
// v2: no sizes (the walk stats no file). v3: folders stamped with their change
// time, inode and device; names escaped.
constexpr const char* kMagic = "stoker-folder-listing v3";
// A folder changed this recently may change again within its filesystem's time resolution
// (1-2 s on some) without its time moving: such a listing is not kept (git's "racy" rule).
constexpr int64_t kSettledNs = 2'000'000'000;

// A name on one line: a backslash and a newline escaped (\\ and \n), every other byte as it
// is. Most names have neither: appended as they are.
void append_escaped(std::string& out, std::string_view name) {
  if (name.find_first_of("\\\n") == std::string_view::npos) {
    out.append(name);
    return;
  }
  for (const char c : name) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
}

// The name append_escaped wrote, appended to `out`; false when `text` is no such name.
bool append_unescaped(std::string& out, std::string_view text) {
  const size_t at = text.find('\\');
  out.append(text.substr(0, at));
  if (at == std::string_view::npos) return true;
  for (size_t i = at; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
    } else if (i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out.push_back(text[++i] == 'n' ? '\n' : '\\');
    } else {
      return false;
    }
  }
  return true;
}

std::string escaped(std::string_view name) {
  std::string out;
  append_escaped(out, name);
  return out;
}

// What an entry must be made for: the root as given (the files' paths follow its
// spelling) and as an absolute path. nullopt when the working folder cannot be named.
std::optional<std::string> entry_key(const std::string& root) {
  std::error_code ec;
  const fs::path abs = fs::absolute(root, ec);
  if (ec) return std::nullopt;
  return "root=" + escaped(root) + " abs=" + escaped(abs.string());
}

std::string entry_name(const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".list", fnv1a(key, kFnvOffset));
  return name;
}

// One name of a folder, as the walk finds them: not empty, ".", ".." nor holding a NUL.
bool is_entry_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('\0') == std::string_view::npos && name.find('/') == std::string_view::npos;
}

// A path under the root as the walk writes it: "/NAME/NAME...", each NAME an entry name.
bool is_walked_path(std::string_view rel) {
  if (rel.empty() || rel.front() != '/') return false;
  size_t at = 1;
  for (;;) {
    const size_t slash = rel.find('/', at);
    if (!is_entry_name(rel.substr(at, slash == std::string_view::npos ? slash : slash - at))) {
      return false;
    }
    if (slash == std::string_view::npos) return true;
    at = slash + 1;
  }
}

// Whether `rel` lies under the class folder `/cls/`, as an image of that class must.
bool is_under_class(std::string_view rel, const std::string& cls) {
  return rel.size() > cls.size() + 2 && rel[0] == '/' && rel.compare(1, cls.size(), cls) == 0 &&
         rel[cls.size() + 1] == '/' && is_walked_path(rel);
}

// Reads the cache file's lines and numbers; any mismatch makes the entry unusable.
class Reader {
 public:
  explicit Reader(std::string_view text) : at_(text.data()), end_(text.data() + text.size()) {}
  bool line(std::string_view* out) {
    const char* nl = std::find(at_, end_, '\n');
    if (nl == end_) return false;
    *out = std::string_view(at_, static_cast<size_t>(nl - at_));
    at_ = nl + 1;
    return true;
  }
  // A number, then one space; false when there is none.
  template <typename T>
  static bool number(std::string_view* s, T* v, int base = 10) {
    const auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), *v, base);
    if (ec != std::errc() || p == s->data() + s->size() || *p != ' ') return false;
    s->remove_prefix(static_cast<size_t>(p - s->data()) + 1);
    return true;
  }

 private:
  const char* at_;
  const char* end_;
};

// One line per cache folder and reason in a process (each open would repeat it).
void warn_once(const std::string& root, const std::string& dir, const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> said;
  {
    std::lock_guard lock(mutex);
    if (!said.insert(dir + "\n" + why).second) return;
  }
  std::fprintf(stderr,
               "stoker: cannot keep the listing of %s in the cache %s (%s); each open lists "
               "the folder again (set STOKER_CACHE_DIR to a writable folder, or to none)\n",
               root.c_str(), dir.c_str(), why.c_str());
}

}  // namespace

void FolderListing::add(std::string_view root, std::string_view rel) {
  path_at.push_back(paths.size());
  paths.append(root);
  paths.append(rel);
  paths.push_back('\0');
}

std::optional<std::string> listing_text(const std::string& root, const FolderListing& l) {
  const auto key = entry_key(root);
  if (!key) return std::nullopt;
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, l.names_hash);
  std::string text;
  text.reserve(l.paths.size() + 16 * l.size() + 64 * l.folders.size() + 256);
  text.append(kMagic).append("\n").append(*key).append("\n");
  text.append(std::to_string(l.classes.size())).append(" ").append(std::to_string(l.size()));
  text.append(" ").append(std::to_string(l.folders.size())).append(" ").append(hash).append("\n");
  for (const std::string& c : l.classes) {
    append_escaped(text, c);
    text.append("\n");
  }
  for (const FolderStamp& f : l.folders) {
    for (const uint64_t v : {static_cast<uint64_t>(f.mtime_ns), static_cast<uint64_t>(f.ctime_ns),
                             f.inode, f.device}) {
      text.append(std::to_string(v)).append(" ");
    }
    append_escaped(text, f.rel);
    text.append("\n");
  }
  for (size_t i = 0; i < l.size(); ++i) {
    text.append(std::to_string(l.labels[i])).append(" ");
    append_escaped(text, l.path(i) + root.size());
    text.append("\n");
  }
  return text;
}

std::optional<FolderListing> read_listing_text(const std::string& root, std::string_view text,
                                               bool check_folders) {
  const auto key = entry_key(root);
  if (!key) return std::nullopt;
  Reader in(text);
  std::string_view s;
  if (!in.line(&s) || s != kMagic || !in.line(&s) || s != *key || !in.line(&s)) return std::nullopt;
  size_t classes = 0, files = 0, folders = 0;
  FolderListing l;
  const std::string counts_text = std::string(s) + " ";  // each number ends with a space
  std::string_view counts = counts_text;
  if (!Reader::number(&counts, &classes) || !Reader::number(&counts, &files) ||
      !Reader::number(&counts, &folders) || !Reader::number(&counts, &l.names_hash, 16)) {
    return std::nullopt;
  }
  // Class names as the walk lists them: one folder name each, sorted, none twice (a class
  // list reordered or shortened would move every label after it).
  for (size_t i = 0; i < classes; ++i) {
    std::string name;
    if (!in.line(&s) || !append_unescaped(name, s) || !is_entry_name(name)) return std::nullopt;
    if (!l.classes.empty() && !(l.classes.back() < name)) return std::nullopt;
    l.classes.push_back(std::move(name));
  }
  // The folders first: one stat each (check_folders), and the files are not read when one
  // changed. The root comes first, then folders under it.
  for (size_t i = 0; i < folders; ++i) {
    FolderStamp f;
    uint64_t mtime = 0, ctime = 0;
    if (!in.line(&s) || !Reader::number(&s, &mtime) || !Reader::number(&s, &ctime) ||
        !Reader::number(&s, &f.inode) || !Reader::number(&s, &f.device) ||
        !append_unescaped(f.rel, s) || (i == 0) != f.rel.empty() ||
        (i > 0 && !is_walked_path(f.rel))) {
      return std::nullopt;
    }
    f.mtime_ns = static_cast<int64_t>(mtime);
    f.ctime_ns = static_cast<int64_t>(ctime);
    if (check_folders) {
      const auto now = folder_stamp(root + f.rel);
      if (!now || !now->same_folder(f)) return std::nullopt;
    }
    l.folders.push_back(std::move(f));
  }
  l.paths.reserve(text.size() + files * (root.size() + 1));
  l.path_at.reserve(files);
  l.labels.reserve(files);
  std::string rel;
  for (size_t i = 0; i < files; ++i) {
    int32_t label = 0;
    rel.clear();
    if (!in.line(&s) || !Reader::number(&s, &label)) return std::nullopt;
    // Each image under its own label's class folder, on a path the walk could have found.
    if (label < 0 || static_cast<size_t>(label) >= classes || !append_unescaped(rel, s) ||
        !is_under_class(rel, l.classes[static_cast<size_t>(label)])) {
      return std::nullopt;
    }
    l.labels.push_back(label);
    l.add(root, rel);
  }
  if (in.line(&s)) return std::nullopt;  // more than the counts said: not this writer's
  return l;
}

std::optional<FolderListing> load_folder_listing(const std::string& root) {
  const auto key = entry_key(root);
  if (!key) return std::nullopt;
  const auto text = read_cache_entry("folders", entry_name(*key));
  if (!text) return std::nullopt;
  return read_listing_text(root, *text, /*check_folders=*/true);
}

void store_folder_listing(const std::string& root, const FolderListing& l) {
  const std::string dir = cache_dir("folders");
  const auto key = entry_key(root);
  if (dir.empty() || !key) return;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t settled =
      static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - kSettledNs;
  for (const FolderStamp& f : l.folders) {
    if (f.mtime_ns > settled) return;
  }
  const auto text = listing_text(root, l);
  if (!text) return;
  if (const std::string why = write_cache_entry("folders", entry_name(*key), *text); !why.empty()) {
    warn_once(root, dir, why);
  }
}

}  // namespace stoker
