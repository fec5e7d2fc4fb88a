#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>

#include "sources/content_sample.hpp"
#include "sources/file_read.hpp"
#include "sources/folder_listing.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

const char* kLayoutHint =
    "expected ROOT/CLASS/IMAGE.jpg (ImageNet / torchvision ImageFolder layout)";

// "data/" and "data" name one folder: its images' paths are spelled "data/CLASS/...".
std::string without_trailing_slashes(const std::string& root) {
  const size_t end = root.find_last_not_of('/');
  return end == std::string::npos ? root.substr(0, 1) : root.substr(0, end + 1);
}

void check_is_folder(const std::string& root) {
  const fs::file_status st = dataset_path_status(root, "folder", "check the dataset path");
  if (!fs::is_directory(st)) throw Error(root, "is not a folder", kLayoutHint);
}

// The index's first line: the fingerprint, the mean image size and the number of sampled
// files; then one line of their chain hashes (hex, space-separated); then the listing.
constexpr const char* kIndexHead =
    "stoker-image-folder-index v2 %016" PRIx64 " %" PRIu64 " %" PRIu64 "\n";

}  // namespace

ImageFolderSource::ImageFolderSource(const std::string& root)
    : root_(without_trailing_slashes(root)) {
  check_is_folder(root_);
  // The cached listing when its folders are unchanged (one stat per folder);
  // else the walk, kept for the next open.
  std::optional<FolderListing> cached = load_folder_listing(root_);
  if (cached) {
    listing_ = std::make_unique<FolderListing>(std::move(*cached));
    try {
      sample_content();
      return;
    } catch (const Error&) {
      // A sampled file gone since (removed and its folder's time restored?): walked again.
    }
  }
  FolderListing walked;
  try {
    walked = walk_image_folder(root_);
  } catch (const fs::filesystem_error& e) {
    throw Error(e.path1().empty() ? root_ : e.path1().string(),
                "cannot be read: " + e.code().message(), fs_error_hint(e.code()));
  }
  if (walked.size() == 0) {
    throw Error(root_,
                walked.classes.empty()
                    ? "holds no class subfolders"
                    : "holds no images (.jpg/.jpeg/.png/.webp) in its " +
                          std::to_string(walked.classes.size()) + " class subfolders",
                kLayoutHint);
  }
  store_folder_listing(root_, walked);
  listing_ = std::make_unique<FolderListing>(std::move(walked));
  sample_content();
}

ImageFolderSource::ImageFolderSource(FromIndex, std::string root) : root_(std::move(root)) {}

ImageFolderSource::~ImageFolderSource() = default;

std::shared_ptr<ImageFolderSource> ImageFolderSource::from_index(const std::string& root,
                                                                 std::string_view index) {
  const std::string base = without_trailing_slashes(root);
  check_is_folder(base);
  uint64_t fingerprint = 0, mean = 0, sampled = 0;
  const size_t head_end = index.find('\n');
  if (head_end == std::string_view::npos) return nullptr;
  const std::string head(index.substr(0, head_end + 1));
  if (std::sscanf(head.c_str(), kIndexHead, &fingerprint, &mean, &sampled) != 3 ||
      sampled > kContentBlocks) {
    return nullptr;
  }
  const size_t chain_end = index.find('\n', head_end + 1);
  if (chain_end == std::string_view::npos) return nullptr;
  std::vector<uint64_t> chain;
  for (std::string_view hex = index.substr(head_end + 1, chain_end - head_end - 1); !hex.empty();) {
    const size_t space = hex.find(' ');
    const auto h = values::parse_hex(hex.substr(0, space));
    if (!h) return nullptr;
    chain.push_back(*h);
    hex.remove_prefix(space == std::string_view::npos ? hex.size() : space + 1);
  }
  auto listing = read_listing_text(base, index.substr(chain_end + 1), /*check_folders=*/false);
  if (!listing || listing->size() == 0 || chain.size() != sampled ||
      sampled != std::min<uint64_t>(listing->size(), kContentBlocks)) {
    return nullptr;
  }
  std::shared_ptr<ImageFolderSource> s(new ImageFolderSource(FromIndex{}, base));
  s->listing_ = std::make_unique<FolderListing>(std::move(*listing));
  s->fingerprint_ = fingerprint;
  s->mean_bytes_ = mean;
  s->sample_chain_ = std::move(chain);
  s->from_index_ = true;
  return s;
}

std::string ImageFolderSource::index() const {
  const auto text = listing_text(root_, *listing_);
  if (!text) return {};
  char head[128];
  std::snprintf(head, sizeof head, kIndexHead, fingerprint_, mean_bytes_,
                static_cast<uint64_t>(sample_chain_.size()));
  std::string out = head;
  out.reserve(out.size() + 17 * sample_chain_.size() + text->size() + 1);
  for (size_t k = 0; k < sample_chain_.size(); ++k) {
    char hex[24];
    std::snprintf(hex, sizeof hex, k == 0 ? "%" PRIx64 : " %" PRIx64, sample_chain_[k]);
    out += hex;
  }
  out += '\n';
  return out + *text;
}

std::string ImageFolderSource::sample_differs() const {
  if (!from_index_) return "";
  const FolderListing& l = *listing_;
  try {
    const FilesSample mine =
        sample_of_files([&l](uint64_t i) { return l.path(i); }, l.size(), l.names_hash);
    for (size_t k = 0; k < mine.chain.size() && k < sample_chain_.size(); ++k) {
      if (mine.chain[k] != sample_chain_[k]) {
        return std::string(l.path(sampled_file(k, mine.chain.size(), l.size()))) +
               ": differs in size or content";
      }
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void ImageFolderSource::sample_content() {
  const FolderListing& l = *listing_;
  const FilesSample sample =
      sample_of_files([&l](uint64_t i) { return l.path(i); }, l.size(), l.names_hash);
  fingerprint_ = sample.hash;
  mean_bytes_ = sample.files == 0 ? 0 : sample.bytes / sample.files;
  sample_chain_ = sample.chain;
}

uint64_t ImageFolderSource::size() const {
  return listing_->size();
}

const std::vector<std::string>& ImageFolderSource::classes() const {
  return listing_->classes;
}

int64_t ImageFolderSource::label(uint64_t index) const {
  return listing_->labels[index];
}

RawSample ImageFolderSource::read(uint64_t index, std::vector<std::byte>& scratch) const {
  return {read_file_sample(listing_->path(index), index, scratch), listing_->labels[index]};
}

std::string ImageFolderSource::location(uint64_t index) const {
  return index < size() ? std::string(listing_->path(index))
                        : root_ + "[" + std::to_string(index) + "]";
}

std::string ImageFolderSource::describe() const {
  return "image folder " + root_ + ": " + std::to_string(size()) + " images in " +
         std::to_string(listing_->classes.size()) + " classes, ~" +
         std::to_string(mean_bytes_ * size() / (1024 * 1024)) + " MiB";
}

}  // namespace stoker
