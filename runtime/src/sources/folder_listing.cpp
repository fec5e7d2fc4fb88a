#include "sources/folder_listing.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/fnv1a.hpp"
#include "sources/cache_dir.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

// Bumped whenever what a walk finds changes (the image extensions, the order, the hash).
// v2: no sizes (issue 36: the walk stats no file).
constexpr const char* kMagic = "stoker-folder-listing v2";
// A folder changed this recently may change again within its filesystem's time resolution
// (1-2 s on some) without its time moving: such a listing is not kept (git's "racy" rule).
constexpr int64_t kSettledNs = 2'000'000'000;

// What an entry must be made for: the root as given (the files' paths follow its
// spelling) and as an absolute path. nullopt when it cannot be named on one line.
std::optional<std::string> entry_key(const std::string& root) {
  std::error_code ec;
  const fs::path abs = fs::absolute(root, ec);
  if (ec || root.find('\n') != std::string::npos) return std::nullopt;
  return "root=" + root + " abs=" + abs.string();
}

std::string entry_path(const std::string& dir, const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".list", fnv1a(key, kFnvOffset));
  return dir + "/" + name;
}

// Reads a whole file into one buffer of its size (a listing of a million files is ~30 MB:
// growing a string to it costs more than reading it); nullopt when it cannot be read.
std::optional<std::string> slurp(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0) {
    text.emplace(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < text->size()) {
      const ssize_t n = ::read(fd, text->data() + done, text->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text->resize(done);
  }
  ::close(fd);
  return text;
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

void warn_once(const std::string& root, const std::string& dir, const std::string& why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
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
  if (!key || l.paths.find('\n') != std::string::npos) return std::nullopt;
  for (const std::string& c : l.classes) {
    if (c.find('\n') != std::string::npos) return std::nullopt;
  }
  for (const FolderStamp& f : l.folders) {
    if (f.rel.find('\n') != std::string::npos) return std::nullopt;
  }
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, l.names_hash);
  std::string text;
  text.reserve(l.paths.size() + 16 * (l.size() + l.folders.size()) + 256);
  text.append(kMagic).append("\n").append(*key).append("\n");
  text.append(std::to_string(l.classes.size())).append(" ").append(std::to_string(l.size()));
  text.append(" ").append(std::to_string(l.folders.size())).append(" ").append(hash).append("\n");
  for (const std::string& c : l.classes) text.append(c).append("\n");
  for (const FolderStamp& f : l.folders) {
    text.append(std::to_string(f.mtime_ns)).append(" ").append(f.rel).append("\n");
  }
  for (size_t i = 0; i < l.size(); ++i) {
    text.append(std::to_string(l.labels[i]))
        .append(" ")
        .append(l.path(i) + root.size())
        .append("\n");
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
  for (size_t i = 0; i < classes; ++i) {
    if (!in.line(&s)) return std::nullopt;
    l.classes.emplace_back(s);
  }
  // The folders first: one stat each (check_folders), and the files are not read when one
  // changed.
  for (size_t i = 0; i < folders; ++i) {
    FolderStamp f;
    if (!in.line(&s) || !Reader::number(&s, &f.mtime_ns)) return std::nullopt;
    f.rel = std::string(s);
    if (check_folders && folder_mtime_ns(root + f.rel) != f.mtime_ns) return std::nullopt;
    l.folders.push_back(std::move(f));
  }
  l.paths.reserve(text.size() + files * (root.size() + 1));
  l.path_at.reserve(files);
  l.labels.reserve(files);
  for (size_t i = 0; i < files; ++i) {
    int32_t label = 0;
    if (!in.line(&s) || !Reader::number(&s, &label)) return std::nullopt;
    if (label < 0 || static_cast<size_t>(label) >= classes) return std::nullopt;
    l.labels.push_back(label);
    l.add(root, s);
  }
  if (in.line(&s)) return std::nullopt;  // more than the counts said: not this writer's
  return l;
}

std::optional<FolderListing> load_folder_listing(const std::string& root) {
  const std::string dir = cache_dir("folders");
  const auto key = entry_key(root);
  if (dir.empty() || !key) return std::nullopt;
  const auto text = slurp(entry_path(dir, *key));
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
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return warn_once(root, dir, ec.message());
  const std::string path = entry_path(dir, *key);
  static std::atomic<uint64_t> writes{0};  // threads of one process write apart too
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out.write(text->data(), static_cast<std::streamsize>(text->size()));
    out.flush();
    if (!out) {
      const int err = errno;
      fs::remove(tmp, ec);
      return warn_once(root, dir, err ? std::strerror(err) : "cannot write");
    }
  }
  fs::rename(tmp, path, ec);  // atomic: a reader sees the old entry or the new, whole
  if (ec) {
    warn_once(root, dir, ec.message());
    fs::remove(tmp, ec);
  }
}

}  // namespace stoker
