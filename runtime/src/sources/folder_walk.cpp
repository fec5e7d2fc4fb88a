// The walk of an image folder (folder_listing.hpp): names from getdents, each entry's type
// from d_type, and a stat only where d_type does not say (DT_UNKNOWN, links) and for the
// folders' times. No image is stat'ed or opened.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "common/fnv1a.hpp"
#include "sources/folder_listing.hpp"
#include "sources/image_names.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const char* what, const std::string& path, int err) {
  throw fs::filesystem_error(what, path, std::error_code(err, std::generic_category()));
}

enum class Kind { other, folder, file };

struct Entry {
  std::string name;
  Kind kind = Kind::other;
};

Kind kind_of(const struct stat& st) {
  return S_ISDIR(st.st_mode) ? Kind::folder : S_ISREG(st.st_mode) ? Kind::file : Kind::other;
}

// The entries of the folder `path`, "." and ".." left out, sorted by name. A link is
// followed (a link to a folder is a folder); a link to nothing is left out, as no image.
std::vector<Entry> read_folder(const std::string& path, const WalkOptions& options) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) fail("cannot open folder", path, errno);
  std::vector<Entry> entries;
  int err = 0;
  for (;;) {
    errno = 0;
    const dirent* d = ::readdir(dir);
    if (d == nullptr) {
      err = errno;
      break;
    }
    const std::string_view name = d->d_name;
    if (name == "." || name == "..") continue;
    const unsigned char type =
        options.trust_dtype ? d->d_type : static_cast<unsigned char>(DT_UNKNOWN);
    Entry e{std::string(name), type == DT_DIR   ? Kind::folder
                               : type == DT_REG ? Kind::file
                                                : Kind::other};
    if (type == DT_UNKNOWN || type == DT_LNK) {
      struct stat st {};
      const std::string full = path + "/" + e.name;
      if (::stat(full.c_str(), &st) != 0) {
        if (errno == ENOENT) continue;
        err = errno;
        ::closedir(dir);
        fail("cannot stat", full, err);
      }
      e.kind = kind_of(st);
    }
    entries.push_back(std::move(e));
  }
  ::closedir(dir);
  if (err != 0) fail("cannot read folder", path, err);
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return entries;
}

// Adds the images under `rel` (a path under root, starting with '/') to `files` and each
// folder's stamp to `l`, taken before its entries are read: a change during the walk leaves
// a newer time than the one recorded, and the entry is not used again.
void walk_class(const std::string& root, const std::string& rel, const WalkOptions& options,
                FolderListing& l, std::vector<std::string>& files) {
  const std::string path = root + rel;
  auto stamp = folder_stamp(path);
  if (!stamp) fail("cannot stat", path, errno);
  stamp->rel = rel;
  l.folders.push_back(std::move(*stamp));
  for (const Entry& e : read_folder(path, options)) {
    if (e.kind == Kind::folder) {
      walk_class(root, rel + "/" + e.name, options, l, files);
    } else if (e.kind == Kind::file && has_image_extension(e.name)) {
      files.push_back(rel + "/" + e.name);
    }
  }
}

}  // namespace

FolderListing walk_image_folder(const std::string& root, const WalkOptions& options) {
  FolderListing l;
  const auto root_stamp = folder_stamp(root);
  if (!root_stamp) fail("cannot stat", root, errno);
  l.folders.push_back(*root_stamp);
  for (const Entry& e : read_folder(root, options)) {
    if (e.kind == Kind::folder) l.classes.push_back(e.name);
  }
  uint64_t h = kFnvOffset;
  std::vector<std::string> files;  // one class's, relative to the root
  for (size_t c = 0; c < l.classes.size(); ++c) {
    files.clear();
    walk_class(root, "/" + l.classes[c], options, l, files);
    // Sorted as whole paths (a nested folder's files among their class's), as always.
    std::sort(files.begin(), files.end());
    h = fnv1a(l.classes[c], h);
    for (const std::string& rel : files) {
      // Relative names only: the same dataset mounted elsewhere has the same fingerprint.
      h = fnv1a(rel, h);
      l.add(root, rel);
      l.labels.push_back(static_cast<int32_t>(c));
    }
  }
  l.names_hash = h;
  return l;
}

}  // namespace stoker
