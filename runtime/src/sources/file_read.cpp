#include "sources/file_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

std::string fs_error_hint(const std::error_code& ec) {
  if (ec == std::errc::too_many_symbolic_link_levels)
    return "a symbolic link there leads back to itself (a link loop): remove it or point it "
           "elsewhere";
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted)
    return "check the permissions: each folder on the way must be one you may enter and read";
  if (ec == std::errc::filename_too_long) return "shorten the path (or its folders' names)";
  if (ec == std::errc::not_a_directory)
    return "a file stands where the path needs a folder: check each part before the last";
  if (ec == std::errc::no_such_file_or_directory)
    return "a symbolic link there points to nothing, or the folder changed while it was "
           "listed: fix the link, or wait until the dataset is written";
  if (ec == std::errc::io_error || ec == std::errc::timed_out || ec.value() == ESTALE)
    return "the filesystem did not answer (a network mount?): check the mount and retry";
  return "check the path";
}

std::filesystem::file_status dataset_path_status(const std::string& path, const char* missing,
                                                 const char* todo) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    throw Error(path, "cannot be read: " + ec.message(), fs_error_hint(ec));
  }
  if (!std::filesystem::exists(st)) throw Error(path, std::string("no such ") + missing, todo);
  return st;
}

std::vector<std::string> folder_files(const std::string& folder,
                                      const std::function<bool(const std::string&)>& wanted) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    if (!wanted(e.path().filename().string())) continue;
    // The error_code form: a link that leads back to itself makes the other throw a bare
    // filesystem_error.
    std::error_code entry_ec;
    const bool file = e.is_regular_file(entry_ec);
    if (entry_ec && entry_ec != std::errc::no_such_file_or_directory)
      throw Error(e.path().string(), "cannot be read: " + entry_ec.message(),
                  fs_error_hint(entry_ec));
    if (file) found.push_back(e.path().string());
  }
  if (ec) throw Error(folder, "cannot be read: " + ec.message(), "check the folder's permissions");
  std::sort(found.begin(), found.end());
  return found;
}

std::span<const std::byte> pread_sample(const char* path, uint64_t offset, uint64_t size,
                                        uint64_t index, std::vector<std::byte>& scratch) {
  Fd f{::open(path, O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    throw SampleError{index, where(path, offset),
                      std::string("cannot open: ") + std::strerror(errno)};
  }
  if (scratch.size() < size) scratch.resize(size);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n =
        ::pread(f.fd, scratch.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw SampleError{index, where(path, offset),
                        std::string("read failed: ") + std::strerror(errno)};
    }
    if (n == 0) {
      throw SampleError{index, where(path, offset),
                        "truncated: expected " + std::to_string(size) +
                            " bytes, the file ends after " + std::to_string(done)};
    }
    done += static_cast<uint64_t>(n);
  }
  return {scratch.data(), size};
}

std::span<const std::byte> read_file_sample(const char* path, uint64_t index,
                                            std::vector<std::byte>& scratch) {
  Fd f{::open(path, O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    throw SampleError{index, path, std::string("cannot open: ") + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    throw SampleError{index, path, std::string("cannot stat: ") + std::strerror(errno)};
  }
  const auto listed = static_cast<uint64_t>(st.st_size);
  uint64_t done = 0, want = listed + 1;
  for (;;) {
    if (scratch.size() < want) scratch.resize(want);
    const ssize_t n = ::pread(f.fd, scratch.data() + done, want - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SampleError{index, path, std::string("read failed: ") + std::strerror(errno)};
    done += static_cast<uint64_t>(n);
    // A regular file's pread is short only at its end.
    if (n == 0 || (done >= listed && done < want)) break;
    if (done == want) want = std::max(want * 2, want + 4096);  // longer than listed: read on
  }
  if (done < listed) {
    throw SampleError{index, path,
                      "truncated: expected " + std::to_string(listed) +
                          " bytes, the file ends after " + std::to_string(done)};
  }
  return {scratch.data(), done};
}

}  // namespace stoker
