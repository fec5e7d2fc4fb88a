#include "sources/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fnv1a.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(path_, std::string("cannot open: ") + std::strerror(errno),
                "check the path and its permissions");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path_, "not a regular file", "give the path of a data file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw Error(path_, std::string("cannot map ") + std::to_string(size_) +
                             " bytes: " + std::strerror(err));
    }
    // Samples are read in shuffled order; readahead of neighbours is wasted work.
    ::madvise(p, size_, MADV_RANDOM);
    data_ = static_cast<const std::byte*>(p);
    register_mapping(data_, size_, path_);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  unregister_mapping(data_);
  ::munmap(const_cast<std::byte*>(data_), size_);
}

uint64_t MappedFile::fingerprint(uint64_t salt) const {
  auto slash = path_.find_last_of('/');
  std::string name = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  uint64_t h = fnv1a(name.data(), name.size());
  h = fnv1a(&size_, sizeof size_, h);
  return fnv1a(&salt, sizeof salt, h);
}

}  // namespace stoker
