// An image folder's listing: its classes, each image's path, size and label, and every
// folder walked with its modification time. Walking the tree costs one stat per image (its
// size, for the fingerprint) on every open; on a network filesystem, times every rank, that
// is the metadata storm of issue 36. So a listing is kept in the cache folder
// (cache_dir.hpp, "folders") and used again while each walked folder still has the time it
// had: adding, removing or renaming a file (or a class) changes its folder's time. A file
// rewritten in place does not; the content sample the source hashes at every open
// (content_sample.hpp) is what catches that, as before. A re-open then costs one stat per
// folder and the reads of that sample.
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
};

struct FolderListing {
  std::vector<std::string> classes;  // sorted
  // Each image's full path (the root as given, then its path under it), NUL-terminated,
  // back to back, in dataset order: by class, then sorted. One buffer, not a string per
  // image: a million allocations cost more than the rest of a cached open.
  std::string paths;
  std::vector<uint64_t> path_at;  // where each image's path starts in `paths`
  std::vector<uint64_t> sizes;
  std::vector<int32_t> labels;
  std::vector<FolderStamp> folders;  // the root first, then every folder walked
  uint64_t names_hash = 0;           // of the class names, the files' paths and sizes

  size_t size() const { return path_at.size(); }
  const char* path(size_t i) const { return paths.data() + path_at[i]; }
  void add(std::string_view root, std::string_view rel);  // root + rel, as the next image
};

// Walks `root` (a folder): its subfolders are the classes, the images anywhere under each
// (links to folders followed) their samples. Throws std::filesystem::filesystem_error.
FolderListing walk_image_folder(const std::string& root);

// The listing of `root` kept in the cache, when there is one and every folder in it still
// has its recorded time; nullopt otherwise (and when caching is off).
std::optional<FolderListing> load_folder_listing(const std::string& root);

// Keeps `listing` of `root` in the cache (written aside, then renamed: two processes
// storing the same entry at once leave one whole file). Not kept while a folder changed in
// the last seconds (a filesystem with coarse times could change it again unseen) or a name
// holds a newline. A cache that cannot be written: one line on stderr per process, and
// each open walks the tree again.
void store_folder_listing(const std::string& root, const FolderListing& listing);

}  // namespace stoker
