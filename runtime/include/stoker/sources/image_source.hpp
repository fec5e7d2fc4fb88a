// An image folder in ImageNet (torchvision ImageFolder) layout: ROOT/CLASS/.../IMAGE.jpg.
// Classes are the sorted names of ROOT's subfolders; the label is the class's index in that
// order. Images are the files named .jpg, .jpeg, .png or .webp (any letter case) under each class
// folder, recursively, in sorted path order, classes in order: the same order as
// ImageFolder's. The name only selects the files; the decoder reads their first bytes.
// The folder is listed once, at construction (names only: no image is stat'ed or opened
// but the content sample's), or its listing read back from stoker's cache while its folders
// are unchanged (src/sources/folder_listing.hpp), or taken from the index another rank made
// (index(), from_index(): one listing per job, distributed/shared_listing.hpp). read() opens,
// fstats and preads one file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/sources/source.hpp"

namespace stoker {

struct FolderListing;  // src/sources/folder_listing.hpp

class ImageFolderSource : public Source {
 public:
  // Throws stoker::Error naming `root` when it is missing, not a folder, unreadable, or
  // holds no image in a class subfolder.
  explicit ImageFolderSource(const std::string& root);
  ~ImageFolderSource() override;

  // The source another process made of the same `root` (its index()), without listing the
  // folder or reading its files: one stat of the root. nullptr when `index` is not a whole
  // index of this root as this process names it (another spelling or working folder, or
  // another version of stoker): the caller then lists the folder itself.
  static std::shared_ptr<ImageFolderSource> from_index(const std::string& root,
                                                       std::string_view index);
  // This source as text for from_index (its listing, fingerprint, mean size and the content
  // sample's hash after each sampled file); "" when the working folder cannot be named.
  std::string index() const;
  // For a source made by from_index: whether this process's files are the ones the lister
  // sampled (node-local copies staged per node may differ). Reads what the lister read (the
  // size and first and last 4 KiB of up to 1024 files), no stat of the others. "" when they
  // match or this source listed its folder itself; else the first differing file, named
  // ("ROOT/c1/x.jpg: differs in size or content", or why it cannot be read).
  std::string sample_differs() const;

  uint64_t size() const override;
  // The file's bytes in `scratch` (all of them, as it is now). A file that cannot be opened
  // or read throws SampleError naming it.
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // the file's path
  // Hash of the class names, the images' paths relative to the root, and a sample of files
  // (their sizes and content: src/sources/content_sample.hpp), made when listed.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  const std::vector<std::string>& classes() const;
  int64_t label(uint64_t index) const;
  // The mean size of an image, as the content sample found it (the listing has no sizes).
  uint64_t mean_bytes() const { return mean_bytes_; }
  double bytes_per_sample() const override { return static_cast<double>(mean_bytes_); }

 private:
  struct FromIndex {};
  ImageFolderSource(FromIndex, std::string root);
  void sample_content();  // fingerprint_ and mean_bytes_, from listing_

  std::string root_;
  std::unique_ptr<FolderListing> listing_;
  uint64_t fingerprint_ = 0, mean_bytes_ = 0;
  std::vector<uint64_t> sample_chain_;  // FilesSample::chain, as the lister found it
  bool from_index_ = false;
};

}  // namespace stoker
