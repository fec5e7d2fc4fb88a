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
#include "sources/image_names.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

// Bumped whenever what a walk finds changes (the image extensions, the order, the hash).
constexpr const char* kMagic = "stoker-folder-listing v1";
// A folder changed this recently may change again within its filesystem's time resolution
// (1-2 s on some) without its time moving: such a listing is not kept (git's "racy" rule).
constexpr int64_t kSettledNs = 2'000'000'000;

int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

int64_t folder_mtime(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw fs::filesystem_error("cannot stat", path, std::error_code(errno, std::generic_category()));
  }
  return mtime_ns(st);
}

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
  explicit Reader(const std::string& text) : at_(text.data()), end_(text.data() + text.size()) {}
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

FolderListing walk_image_folder(const std::string& root) {
  FolderListing l;
  // Each folder's time is taken before its entries are read: a change during the walk
  // leaves a newer time than the one recorded, and the entry is not used again.
  l.folders.push_back({"", folder_mtime(root)});
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    if (e.is_directory()) l.classes.push_back(e.path().filename().string());
  }
  std::sort(l.classes.begin(), l.classes.end());
  uint64_t h = kFnvOffset;
  std::vector<std::pair<std::string, uint64_t>> files;  // one class at a time
  for (size_t c = 0; c < l.classes.size(); ++c) {
    files.clear();
    const fs::path dir = fs::path(root) / l.classes[c];
    l.folders.push_back({dir.string().substr(root.size()), folder_mtime(dir.string())});
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(
             dir, fs::directory_options::follow_directory_symlink)) {
      if (e.is_directory()) {
        l.folders.push_back({e.path().string().substr(root.size()), folder_mtime(e.path())});
      } else if (e.is_regular_file() && has_image_extension(e.path().filename().native())) {
        files.emplace_back(e.path().string(), e.file_size());
      }
    }
    std::sort(files.begin(), files.end());
    h = fnv1a(l.classes[c], h);
    for (const auto& [path, bytes] : files) {
      // Relative names only: the same dataset mounted elsewhere has the same fingerprint.
      const std::string_view rel = std::string_view(path).substr(root.size());
      h = fnv1a(rel, h);
      h = fnv1a(bytes, h);
      l.add(root, rel);
      l.sizes.push_back(bytes);
      l.labels.push_back(static_cast<int32_t>(c));
    }
  }
  l.names_hash = h;
  return l;
}

std::optional<FolderListing> load_folder_listing(const std::string& root) {
  const std::string dir = cache_dir("folders");
  const auto key = entry_key(root);
  if (dir.empty() || !key) return std::nullopt;
  const auto text = slurp(entry_path(dir, *key));
  if (!text) return std::nullopt;
  Reader in(*text);
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
  // The folders first: one stat each, and the files are not read when one changed.
  for (size_t i = 0; i < folders; ++i) {
    FolderStamp f;
    if (!in.line(&s) || !Reader::number(&s, &f.mtime_ns)) return std::nullopt;
    f.rel = std::string(s);
    struct stat st {};
    if (::stat((root + f.rel).c_str(), &st) != 0 || mtime_ns(st) != f.mtime_ns) return std::nullopt;
    l.folders.push_back(std::move(f));
  }
  l.paths.reserve(text->size() + files * (root.size() + 1));
  l.path_at.reserve(files);
  l.sizes.reserve(files);
  l.labels.reserve(files);
  for (size_t i = 0; i < files; ++i) {
    int32_t label = 0;
    uint64_t size = 0;
    if (!in.line(&s) || !Reader::number(&s, &label) || !Reader::number(&s, &size)) return std::nullopt;
    if (label < 0 || static_cast<size_t>(label) >= classes) return std::nullopt;
    l.labels.push_back(label);
    l.sizes.push_back(size);
    l.add(root, s);
  }
  if (in.line(&s)) return std::nullopt;  // more than the counts said: not this writer's
  return l;
}

void store_folder_listing(const std::string& root, const FolderListing& l) {
  const std::string dir = cache_dir("folders");
  const auto key = entry_key(root);
  if (dir.empty() || !key) return;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t settled = static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - kSettledNs;
  for (const FolderStamp& f : l.folders) {
    if (f.mtime_ns > settled || f.rel.find('\n') != std::string::npos) return;
  }
  for (const std::string& c : l.classes) {
    if (c.find('\n') != std::string::npos) return;
  }
  if (l.paths.find('\n') != std::string::npos) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return warn_once(root, dir, ec.message());
  const std::string path = entry_path(dir, *key);
  static std::atomic<uint64_t> writes{0};  // threads of one process write apart too
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016" PRIx64, l.names_hash);
    out << kMagic << '\n' << *key << '\n'
        << l.classes.size() << ' ' << l.size() << ' ' << l.folders.size() << ' ' << hash
        << '\n';
    for (const std::string& c : l.classes) out << c << '\n';
    for (const FolderStamp& f : l.folders) out << f.mtime_ns << ' ' << f.rel << '\n';
    for (size_t i = 0; i < l.size(); ++i) {
      out << l.labels[i] << ' ' << l.sizes[i] << ' ' << (l.path(i) + root.size()) << '\n';
    }
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
