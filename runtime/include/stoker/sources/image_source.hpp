// An image folder in ImageNet (torchvision ImageFolder) layout: ROOT/CLASS/.../IMAGE.jpg.
// Classes are the sorted names of ROOT's subfolders; the label is the class's index in that
// order. Images are the files named .jpg, .jpeg, .png or .webp (any letter case) under each class
// folder, recursively, in sorted path order, classes in order: the same order as
// ImageFolder's. The name only selects the files; the decoder reads their first bytes.
// The folder is scanned once, at construction (or its listing read back from stoker's cache
// while its folders are unchanged: src/sources/folder_listing.hpp); read() opens and preads
// one file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/sources/source.hpp"

namespace stoker {

struct ContentFile;    // sources/content_sample.hpp
struct FolderListing;  // sources/folder_listing.hpp

class ImageFolderSource : public Source {
 public:
  // Throws stoker::Error naming `root` when it is missing, not a folder, unreadable, or
  // holds no image in a class subfolder.
  explicit ImageFolderSource(const std::string& root);

  uint64_t size() const override { return sizes_.size(); }
  // The file's bytes in `scratch` (all of them, also when it is longer than listed). A file
  // that cannot be opened or is shorter than at scan time throws SampleError naming it.
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // the file's path
  // Hash of the class names, the images' paths relative to the root, their sizes, and a
  // sample of their content (src/sources/content_sample.hpp), made at construction.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  const std::vector<std::string>& classes() const { return classes_; }
  int64_t label(uint64_t index) const { return labels_[index]; }
  uint64_t bytes() const { return total_bytes_; }  // of all images

 private:
  void take(FolderListing&& listing);           // its names, sizes and labels
  std::vector<ContentFile> content() const;     // the images, for the content sample

  std::string root_;
  std::vector<std::string> classes_;
  std::string paths_;                // NUL-terminated full paths, back to back
  std::vector<uint64_t> path_at_;    // offset of each image's path in paths_
  std::vector<uint64_t> sizes_;
  std::vector<int32_t> labels_;
  uint64_t fingerprint_ = 0, total_bytes_ = 0;
  uint64_t names_hash_ = 0;  // of the classes, the paths and sizes: the fingerprint's start
};

}  // namespace stoker
