#include "sources/file_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "stoker/common/error.hpp"

namespace stoker {

namespace {

std::string where(const char* path, uint64_t offset) {
  return offset == 0 ? std::string(path) : std::string(path) + "@" + std::to_string(offset);
}

// Closes the descriptor on every path out, exceptions included.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::filesystem::file_status dataset_path_status(const std::string& path, const char* missing,
                                                 const char* todo) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    throw Error(path, "cannot be read: " + ec.message(),
                "check the path: each part before the last must be a folder you may enter");
  }
  if (!std::filesystem::exists(st)) throw Error(path, std::string("no such ") + missing, todo);
  return st;
}

std::span<const std::byte> pread_sample(const char* path, uint64_t offset, uint64_t size,
                                        uint64_t index, std::vector<std::byte>& scratch) {
  Fd f{::open(path, O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    throw SampleError{index, where(path, offset), std::string("cannot open: ") + std::strerror(errno)};
  }
  if (scratch.size() < size) scratch.resize(size);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(f.fd, scratch.data() + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw SampleError{index, where(path, offset), std::string("read failed: ") + std::strerror(errno)};
    }
    if (n == 0) {
      throw SampleError{index, where(path, offset),
                        "truncated: expected " + std::to_string(size) + " bytes, the file ends after " +
                            std::to_string(done)};
    }
    done += static_cast<uint64_t>(n);
  }
  return {scratch.data(), size};
}

}  // namespace stoker
