// Token files and token sets (stoker/sources/token_source.hpp).
#include <algorithm>
#include <filesystem>

#include "common/fnv1a.hpp"
#include "sources/content_sample.hpp"
#include "sources/file_read.hpp"
#include "sources/mapped_file.hpp"
#include "sources/npy_header.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/token_source.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

// The files a token set names: files as given, a folder's files sorted (no hidden ones).
std::vector<std::string> list_token_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    const fs::file_status st = dataset_path_status(p, "token file or folder", "check the path");
    if (!fs::is_directory(st)) {
      files.push_back(p);
      continue;
    }
    const std::vector<std::string> found =
        folder_files(p, [](const std::string& name) { return !name.starts_with("."); });
    if (found.empty()) throw Error(p, "is a folder without token files", "check the path");
    files.insert(files.end(), found.begin(), found.end());
  }
  if (files.empty()) throw Error("token files", "no token file given", "pass files or a folder");
  return files;
}

// The token type an .npy header declares, or an error naming the file.
DType npy_dtype(const NpyHeader& h, const std::string& path) {
  if (h.descr == "<u2" || h.descr == "=u2") return DType::U16;
  if (h.descr == "<u4" || h.descr == "=u4") return DType::U32;
  throw Error(path, "holds a numpy array of type '" + h.descr + "', not uint16 or uint32 tokens",
              "save the tokens as uint16 or uint32 (numpy '<u2' / '<u4')");
}

}  // namespace

TokenFileSource::TokenFileSource(const std::string& path, uint64_t seq_len, DType dtype)
    : seq_len_(seq_len) {
  open(list_token_files({path}), dtype);
}

TokenFileSource::TokenFileSource(const std::vector<std::string>& paths, uint64_t seq_len,
                                 std::optional<DType> dtype)
    : seq_len_(seq_len) {
  open(list_token_files(paths), dtype);
}

TokenFileSource::~TokenFileSource() = default;

void TokenFileSource::open(const std::vector<std::string>& paths, std::optional<DType> dtype) {
  const std::string& first = paths.front();
  if (dtype && *dtype != DType::U16 && *dtype != DType::U32) {
    throw Error(first, std::string("token type ") + to_string(*dtype) + " is not supported",
                "use uint16 or uint32");
  }
  if (seq_len_ == 0) throw Error(first, "sequence length 0", "give a sequence length > 0");
  std::string typed_by;  // the file whose header set the type, when one did
  for (const std::string& path : paths) {
    File f;
    f.map = std::make_unique<MappedFile>(path);
    const std::optional<NpyHeader> npy = parse_npy_header(f.map->bytes(), path);
    if (npy && (!npy->length || npy->fortran_order)) {
      throw Error(path, "is not a one-dimensional numpy array", "save the tokens as a flat array");
    }
    if (!dtype) {  // the first file decides: its header's type, else uint16
      dtype = npy ? npy_dtype(*npy, path) : DType::U16;
      typed_by = npy ? path : path + " (raw, read as uint16)";
    }
    if (npy) {
      const DType t = npy_dtype(*npy, path);
      if (t != *dtype) {
        throw Error(
            path,
            std::string("holds ") + to_string(t) + " tokens, but " +
                (typed_by.empty() ? std::string("the set was asked for ") + to_string(*dtype)
                                  : typed_by + " holds " + to_string(*dtype)),
            "use one token type for every file of the set");
      }
    }
    dtype_ = *dtype;
    token_bytes_ = dtype_size(dtype_);
    f.data = npy ? npy->data_offset : 0;
    const uint64_t bytes = f.map->size() - f.data;
    if (bytes == 0) throw Error(path, "the token file is empty", "point at a tokenized corpus");
    if (bytes % token_bytes_ != 0 || (npy && *npy->length * token_bytes_ > bytes)) {
      throw Error(path,
                  "size " + std::to_string(bytes) + " bytes is not a multiple of the " +
                      std::to_string(token_bytes_) + "-byte " + to_string(dtype_) + " token" +
                      (npy ? " or is shorter than its header says" : ""),
                  "check the token type (uint16 or uint32)");
    }
    f.tokens = npy ? *npy->length : bytes / token_bytes_;
    if (f.tokens < seq_len_ + 1) {
      throw Error(path,
                  "holds " + std::to_string(f.tokens) + " tokens, shorter than one window of " +
                      std::to_string(seq_len_ + 1) + " (seq_len + 1)",
                  "use a shorter sequence length or a larger file");
    }
    f.first = windows_;
    windows_ += (f.tokens - 1) / seq_len_;
    tokens_ += f.tokens;
    files_.push_back(std::move(f));
  }
  const uint64_t salt = seq_len_ * 8 + static_cast<uint64_t>(dtype_);
  std::vector<ContentFile> content;
  uint64_t h = kFnvOffset;
  for (const File& f : files_) {
    h = fnv1a(f.map->fingerprint(salt), h);
    content.push_back({f.map->path().c_str(), f.map->size()});
  }
  fingerprint_ = content_sample_hash(content, h);
}

size_t TokenFileSource::file_of(uint64_t index) const {
  const auto it = std::upper_bound(files_.begin(), files_.end(), index,
                                   [](uint64_t i, const File& f) { return i < f.first; });
  return static_cast<size_t>(it - files_.begin()) - 1;
}

RawSample TokenFileSource::read(uint64_t index, std::vector<std::byte>&) const {
  if (index >= windows_) {
    throw SampleError{index, location(index),
                      "window index beyond the set's " + std::to_string(windows_) + " windows"};
  }
  const File& f = files_[file_of(index)];
  const size_t window_bytes = (seq_len_ + 1) * token_bytes_;
  return {
      f.map->bytes().subspan(f.data + (index - f.first) * seq_len_ * token_bytes_, window_bytes),
      0};
}

std::string TokenFileSource::location(uint64_t index) const {
  const File& f = files_[index < windows_ ? file_of(index) : files_.size() - 1];
  return f.map->path() + "@" + std::to_string(f.data + (index - f.first) * seq_len_ * token_bytes_);
}

std::string TokenFileSource::describe() const {
  const std::string what = files_.size() == 1
                               ? "token file " + files_.front().map->path()
                               : "token set of " + std::to_string(files_.size()) +
                                     " files (first " + files_.front().map->path() + ")";
  return what + ": " + std::to_string(tokens_) + " " + to_string(dtype_) + " tokens, " +
         std::to_string(windows_) + " windows of " + std::to_string(seq_len_ + 1) + " (stride " +
         std::to_string(seq_len_) + ")";
}

}  // namespace stoker
