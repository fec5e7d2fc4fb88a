#include "sources/content_sample.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/fnv1a.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

namespace {

// The dataset's byte ranges to read, as (offset, length) over the files end to end.
std::vector<std::pair<uint64_t, uint64_t>> sampled_ranges(uint64_t total) {
  if (total <= kContentBlocks * kContentBlockBytes) return {{0, total}};
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const uint64_t last = total - kContentBlockBytes;  // the start of the final block
  for (uint64_t k = 0; k < kContentBlocks; ++k) {
    // Evenly spaced from 0 to `last` (both included), in 128-bit to avoid overflow.
    const auto start =
        static_cast<uint64_t>(static_cast<unsigned __int128>(last) * k / (kContentBlocks - 1));
    ranges.emplace_back(start, kContentBlockBytes);
  }
  return ranges;
}

class OpenFile {
 public:
  explicit OpenFile(const char* path) : path_(path), fd_(::open(path, O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0)
      fail(std::string("cannot be opened to fingerprint its content: ") + std::strerror(errno));
  }
  ~OpenFile() { ::close(fd_); }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  uint64_t size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail(std::string("cannot be stat'ed: ") + std::strerror(errno));
    return static_cast<uint64_t>(st.st_size);
  }

  uint64_t hash(uint64_t offset, uint64_t length, uint64_t h, std::vector<unsigned char>& buf) {
    buf.resize(length);
    uint64_t done = 0;
    while (done < length) {
      const ssize_t n =
          ::pread(fd_, buf.data() + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        fail(std::string("cannot be read to fingerprint its content: ") + std::strerror(errno));
      if (n == 0)
        fail("is shorter than when it was listed (it changed while the dataset was opened)");
      done += static_cast<uint64_t>(n);
    }
    return fnv1a(buf.data(), length, h);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_, what, "check that nothing rewrites the dataset while it is opened");
  }
  std::string path_;
  int fd_;
};

}  // namespace

uint64_t content_sample_hash(const std::vector<ContentFile>& files, uint64_t h) {
  uint64_t total = 0;
  for (const ContentFile& f : files) total += f.size;
  std::vector<unsigned char> buf;
  std::unique_ptr<OpenFile> open;  // files[open_index], kept while its blocks are read
  size_t open_index = 0;
  size_t file = 0;
  uint64_t file_start = 0;  // the dataset offset of files[file]'s first byte
  for (auto [offset, length] : sampled_ranges(total)) {
    // A range may cross files: read it piece by piece, each file opened once per piece.
    while (length > 0) {
      while (offset >= file_start + files[file].size) file_start += files[file++].size;
      const uint64_t in_file = offset - file_start;
      const uint64_t piece = std::min(length, files[file].size - in_file);
      if (!open || open_index != file) {
        open.reset();  // one descriptor at a time
        open = std::make_unique<OpenFile>(files[file].path);
        open_index = file;
      }
      h = open->hash(in_file, piece, h, buf);
      offset += piece;
      length -= piece;
    }
  }
  return h;
}

uint64_t sampled_file(uint64_t k, uint64_t n, uint64_t count) {
  // Evenly spaced from 0 to count - 1 (both included), in 128-bit to avoid overflow.
  return n == 1 ? 0
                : static_cast<uint64_t>(static_cast<unsigned __int128>(count - 1) * k / (n - 1));
}

FilesSample sample_of_files(const std::function<const char*(uint64_t)>& path, uint64_t count,
                            uint64_t h) {
  FilesSample sample;
  const uint64_t n = std::min(count, kContentBlocks);
  sample.chain.reserve(n);
  std::vector<unsigned char> buf;
  for (uint64_t k = 0; k < n; ++k) {
    OpenFile f(path(sampled_file(k, n, count)));
    const uint64_t size = f.size();
    h = fnv1a(size, h);
    if (size <= 2 * kContentBlockBytes) {
      h = f.hash(0, size, h, buf);
    } else {
      h = f.hash(0, kContentBlockBytes, h, buf);
      h = f.hash(size - kContentBlockBytes, kContentBlockBytes, h, buf);
    }
    sample.files++;
    sample.bytes += size;
    sample.chain.push_back(h);
  }
  sample.hash = h;
  return sample;
}

}  // namespace stoker
