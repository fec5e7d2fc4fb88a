// A read-only memory mapping of a whole file, shared by the fixed-layout sources
// (token windows, fixed records): reading a sample is then a pointer into the page cache.
// Its bytes are read through stoker/sources/mapped_read.hpp, so that a file that shrinks
// while mapped is an error naming it instead of a SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace stoker {

// Every mapping is registered (mapped_read.cpp): the first installs the SIGBUS handler, and
// the error for a fault inside one names its file.
void register_mapping(const std::byte* begin, uint64_t size, const std::string& path);
void unregister_mapping(const std::byte* begin);

class MappedFile {
 public:
  // Throws stoker::Error naming the file when it cannot be opened or mapped.
  // An empty file maps to an empty span (the caller decides whether that is an error).
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // A fingerprint of the file's name (not its directory) and size.
  uint64_t fingerprint(uint64_t salt) const;

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace stoker
