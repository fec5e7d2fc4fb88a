// An image folder's listing: its classes, each image's path and label, and every folder
// walked with its modification time. Implemented by folder_walk.cpp (the walk) and
// folder_listing.cpp (the listing as text: the cache entry, and the index one rank gives
// the others).
//
// The walk reads names only (getdents, with each entry's type from d_type): no image is
// stat'ed or opened, so on a network filesystem a listing costs the metadata server one
// readdir per folder, not one request per file (the metadata storm of many ranks). Entries
// whose type d_type does not give (DT_UNKNOWN on some network filesystems, and links) are
// stat'ed, as they must be.
//
// A listing is kept in the cache folder (cache_dir.hpp, "folders") and used again while
// each walked folder is still the same folder with the same times: adding, removing or
// renaming a file (or a class) changes its folder's modification time, and a copy that
// restores that time (tar x, rsync -a, cp -a, a reproducibly built image) still changes what
// no one can set: the change time, the inode or the device. A file rewritten in place changes
// none of them; the content sample the source hashes (content_sample.hpp) is what catches
// that. A re-open then costs one stat per folder and the reads of that sample.
//
// An entry read back is taken only when it is this user's (cache_dir.hpp) and whole, and
// only as a listing the walk could have made: sorted class names that are one folder name
// each, every image under its own label's class folder, no "." or ".." in a path. Names are
// written escaped (a backslash and a newline as \\ and \n), so any name the filesystem
// allows (any byte but NUL and '/') round-trips, in the cache and in the index one rank
// gives the others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

struct FolderStamp {
  std::string rel;       // the folder's path after the root ("" for the root itself)
  int64_t mtime_ns = 0;  // its modification time (following links, as the walk does)
  // What a copy with restored times does not restore: the change time (the kernel's, set at
  // every change, never by a user), the inode and the device.
  int64_t ctime_ns = 0;
  uint64_t inode = 0, device = 0;
  bool same_folder(const FolderStamp& o) const {
    return mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns && inode == o.inode &&
           device == o.device;
  }
};

struct FolderListing {
  std::vector<std::string> classes;  // sorted
  // Each image's full path (the root as given, then its path under it), NUL-terminated,
  // back to back, in dataset order: by class, then sorted. One buffer, not a string per
  // image: a million allocations cost more than the rest of a cached open.
  std::string paths;
  std::vector<uint64_t> path_at;  // where each image's path starts in `paths`
  std::vector<int32_t> labels;
  std::vector<FolderStamp> folders;  // the root first, then every folder walked
  uint64_t names_hash = 0;           // of the class names and the files' relative paths

  size_t size() const { return path_at.size(); }
  const char* path(size_t i) const { return paths.data() + path_at[i]; }
  void add(std::string_view root, std::string_view rel);  // root + rel, as the next image
};

struct WalkOptions {
  // false: every entry's type is asked with a stat, as on a filesystem whose getdents
  // gives DT_UNKNOWN (the tests' stand-in for one: no filesystem here gives it).
  bool trust_dtype = true;
};

// Walks `root` (a folder): its subfolders are the classes, the images anywhere under each
// (links to folders followed) their samples. Throws std::filesystem::filesystem_error.
FolderListing walk_image_folder(const std::string& root, const WalkOptions& options = {});

// A folder's stamp (following links; rel left empty), nullopt when it cannot be stat'ed.
std::optional<FolderStamp> folder_stamp(const std::string& path);

// The listing as text, and back. read_listing_text gives nullopt unless `text` is a whole
// listing of this version made for the same `root` (spelled the same, and the same folder
// from this process's working folder) that the walk could have made (see above); with
// check_folders, also unless every folder in it still has its recorded stamp (one stat each).
std::optional<std::string> listing_text(const std::string& root, const FolderListing& listing);
std::optional<FolderListing> read_listing_text(const std::string& root, std::string_view text,
                                               bool check_folders);

// The listing of `root` kept in the cache, when there is one of this user's and every
// folder in it still has its recorded stamp; nullopt otherwise (and when caching is off).
std::optional<FolderListing> load_folder_listing(const std::string& root);

// Keeps `listing` of `root` in the cache (written aside, then renamed: two processes
// storing the same entry at once leave one whole file). Not kept while a folder changed in
// the last seconds (a filesystem with coarse times could change it again unseen). A cache
// that cannot be written: one line on stderr per folder and reason in a process, and each open
// walks the tree again.
void store_folder_listing(const std::string& root, const FolderListing& listing);

}  // namespace stoker
