#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sources/content_sample.hpp"
#include "sources/file_read.hpp"
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
  try {
    for (const fs::directory_entry& e : fs::directory_iterator(root)) {
      if (e.is_directory()) classes_.push_back(e.path().filename().string());
    }
    std::sort(classes_.begin(), classes_.end());
    uint64_t h = kFnvOffset;
    std::vector<std::pair<std::string, uint64_t>> files;  // one class at a time
    for (size_t c = 0; c < classes_.size(); ++c) {
      files.clear();
      const fs::path dir = fs::path(root) / classes_[c];
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(
               dir, fs::directory_options::follow_directory_symlink)) {
        if (e.is_regular_file() && has_image_extension(e.path().filename().native())) {
          files.emplace_back(e.path().string(), e.file_size());
        }
      }
      std::sort(files.begin(), files.end());
      h = fnv1a(classes_[c], h);
      for (const auto& [path, bytes] : files) {
        path_at_.push_back(paths_.size());
        paths_ += path;
        paths_.push_back('\0');
        sizes_.push_back(bytes);
        labels_.push_back(static_cast<int32_t>(c));
        total_bytes_ += bytes;
        // Relative names only: the same dataset mounted elsewhere has the same fingerprint.
        h = fnv1a(std::string_view(path).substr(root.size()), h);
        h = fnv1a(bytes, h);
      }
    }
    std::vector<ContentFile> content;
    content.reserve(sizes_.size());
    for (size_t i = 0; i < sizes_.size(); ++i) content.push_back({location(i), sizes_[i]});
    fingerprint_ = content_sample_hash(content, h);
  } catch (const fs::filesystem_error& e) {
    throw Error(e.path1().empty() ? root : e.path1().string(),
                "cannot be read: " + e.code().message(), fs_error_hint(e.code()));
  }
  if (sizes_.empty()) {
    throw Error(root,
                classes_.empty() ? "holds no class subfolders"
                                 : "holds no images (.jpg/.jpeg/.png/.webp) in its " +
                                       std::to_string(classes_.size()) + " class subfolders",
                kLayoutHint);
  }
}

RawSample ImageFolderSource::read(uint64_t index, std::vector<std::byte>& scratch) const {
  const char* path = paths_.data() + path_at_[index];
  return {pread_sample(path, 0, sizes_[index], index, scratch), labels_[index]};
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
