#include <filesystem>
#include <optional>
#include <system_error>

#include "sources/content_sample.hpp"
#include "sources/file_read.hpp"
#include "sources/folder_listing.hpp"
#include "sources/image_names.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

const char* kLayoutHint = "expected ROOT/CLASS/IMAGE.jpg (ImageNet / torchvision ImageFolder layout)";

}  // namespace

ImageFolderSource::ImageFolderSource(const std::string& root) : root_(root) {
  const fs::file_status st = dataset_path_status(root, "folder", "check the dataset path");
  if (!fs::is_directory(st)) throw Error(root, "is not a folder", kLayoutHint);
  // The cached listing when its folders are unchanged (one stat per folder: issue 36);
  // else the walk, kept for the next open.
  std::optional<FolderListing> cached = load_folder_listing(root);
  if (cached) {
    take(std::move(*cached));
    try {
      fingerprint_ = content_sample_hash(content(), names_hash_);
      return;
    } catch (const Error&) {
      // A file rewritten in place since (shorter, or gone): its folder's time did not
      // move, the content sample found it. Walked again below, as on a first open.
    }
  }
  FolderListing walked;
  try {
    walked = walk_image_folder(root);
  } catch (const fs::filesystem_error& e) {
    throw Error(e.path1().empty() ? root : e.path1().string(),
                "cannot be read: " + e.code().message(), fs_error_hint(e.code()));
  }
  if (walked.size() == 0) {
    throw Error(root,
                walked.classes.empty() ? "holds no class subfolders"
                                       : "holds no images (.jpg/.jpeg/.png/.webp) in its " +
                                             std::to_string(walked.classes.size()) +
                                             " class subfolders",
                kLayoutHint);
  }
  store_folder_listing(root, walked);
  take(std::move(walked));
  fingerprint_ = content_sample_hash(content(), names_hash_);
}

void ImageFolderSource::take(FolderListing&& l) {
  classes_ = std::move(l.classes);
  paths_ = std::move(l.paths);
  path_at_ = std::move(l.path_at);
  sizes_ = std::move(l.sizes);
  total_bytes_ = 0;
  for (uint64_t bytes : sizes_) total_bytes_ += bytes;
  labels_ = std::move(l.labels);
  names_hash_ = l.names_hash;
}

std::vector<ContentFile> ImageFolderSource::content() const {
  std::vector<ContentFile> files;
  files.reserve(sizes_.size());
  for (size_t i = 0; i < sizes_.size(); ++i) files.push_back({paths_.data() + path_at_[i], sizes_[i]});
  return files;
}

RawSample ImageFolderSource::read(uint64_t index, std::vector<std::byte>& scratch) const {
  const char* path = paths_.data() + path_at_[index];
  return {read_file_sample(path, sizes_[index], index, scratch), labels_[index]};
}

std::string ImageFolderSource::location(uint64_t index) const {
  return index < path_at_.size() ? std::string(paths_.data() + path_at_[index])
                                 : root_ + "[" + std::to_string(index) + "]";
}

std::string ImageFolderSource::describe() const {
  return "image folder " + root_ + ": " + std::to_string(sizes_.size()) + " images in " +
         std::to_string(classes_.size()) + " classes, " +
         std::to_string(total_bytes_ / (1024 * 1024)) + " MiB";
}

}  // namespace stoker
