#include "sources/mapped_file.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/token_source.hpp"

namespace stoker {

TokenFileSource::TokenFileSource(const std::string& path, uint64_t seq_len, DType dtype)
    : seq_len_(seq_len), dtype_(dtype) {
  if (dtype != DType::U16 && dtype != DType::U32) {
    throw Error(path, std::string("token type ") + to_string(dtype) + " is not supported",
                "use uint16 or uint32");
  }
  if (seq_len == 0) throw Error(path, "sequence length 0", "give a sequence length > 0");
  token_bytes_ = dtype_size(dtype);
  file_ = std::make_unique<MappedFile>(path);
  const uint64_t bytes = file_->size();
  if (bytes == 0) throw Error(path, "the token file is empty", "point at a tokenized corpus");
  if (bytes % token_bytes_ != 0) {
    throw Error(path,
                "size " + std::to_string(bytes) + " bytes is not a multiple of the " +
                    std::to_string(token_bytes_) + "-byte " + to_string(dtype) + " token",
                "check the token type (uint16 or uint32)");
  }
  tokens_ = bytes / token_bytes_;
  if (tokens_ < seq_len + 1) {
    throw Error(path,
                "holds " + std::to_string(tokens_) + " tokens, shorter than one window of " +
                    std::to_string(seq_len + 1) + " (seq_len + 1)",
                "use a shorter sequence length or a larger file");
  }
  windows_ = (tokens_ - 1) / seq_len;
}

TokenFileSource::~TokenFileSource() = default;

RawSample TokenFileSource::read(uint64_t index, std::vector<std::byte>&) const {
  if (index >= windows_) {
    throw SampleError{index, location(index),
                      "window index beyond the file's " + std::to_string(windows_) + " windows"};
  }
  const size_t window_bytes = (seq_len_ + 1) * token_bytes_;
  return {file_->bytes().subspan(index * seq_len_ * token_bytes_, window_bytes), 0};
}

std::string TokenFileSource::location(uint64_t index) const {
  return file_->path() + "@" + std::to_string(index * seq_len_ * token_bytes_);
}

uint64_t TokenFileSource::fingerprint() const {
  return file_->fingerprint(seq_len_ * 8 + static_cast<uint64_t>(dtype_));
}

std::string TokenFileSource::describe() const {
  return "token file " + file_->path() + ": " + std::to_string(tokens_) + " " + to_string(dtype_) +
         " tokens, " + std::to_string(windows_) + " windows of " + std::to_string(seq_len_ + 1) +
         " (stride " + std::to_string(seq_len_) + ")";
}

}  // namespace stoker
