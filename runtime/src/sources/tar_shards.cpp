// Tar shard indexing: one pass over each shard's 512-byte headers, grouping consecutive
// members by WebDataset key. Only the image's offset and size and the label are kept.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "sources/file_read.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/tar_source.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kBlock = 512;

std::string at(const std::string& shard, uint64_t offset) {
  return shard + "@" + std::to_string(offset);
}

// A shard open for indexing: reads whole blocks, failing with the shard and offset.
class ShardReader {
 public:
  explicit ShardReader(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
      const int err = errno;
      if (fd_ >= 0) ::close(fd_);
      throw Error(path, std::string("cannot open tar shard: ") + std::strerror(err),
                  "check the shard list");
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~ShardReader() { ::close(fd_); }
  uint64_t size() const { return size_; }
  // Throws when [offset, offset+n) runs past the end: the shard is truncated there.
  void check_range(uint64_t offset, uint64_t n, const std::string& what) const {
    if (offset + n > size_) {
      throw Error(at(path_, offset),
                  "truncated tar shard: " + what + " needs " + std::to_string(n) +
                      " bytes, the shard ends at byte " + std::to_string(size_),
                  "re-create or re-download the shard");
    }
  }
  // Reads n bytes at offset, or throws: the shard is truncated or unreadable there.
  void read(uint64_t offset, void* out, uint64_t n, const std::string& what) const {
    check_range(offset, n, what);
    uint64_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, static_cast<char*>(out) + done, n - done,
                                static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        throw Error(at(path_, offset), std::string("cannot read tar shard: ") +
                                           (r < 0 ? std::strerror(errno) : "unexpected end"));
      }
      done += static_cast<uint64_t>(r);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A numeric header field: octal text, or GNU base-256 when the top bit is set.
bool parse_number(const char* field, size_t n, uint64_t& out) {
  const auto* u = reinterpret_cast<const unsigned char*>(field);
  out = 0;
  if (u[0] & 0x80) {
    for (size_t i = 1; i < n; ++i) out = (out << 8) | u[i];
    return (u[0] & 0x7f) == 0;  // no negative or > 2^64 sizes
  }
  size_t i = 0;
  while (i < n && (field[i] == ' ' || field[i] == '\0')) ++i;
  bool any = false;
  for (; i < n && field[i] >= '0' && field[i] <= '7'; ++i, any = true) out = out * 8 + (field[i] - '0');
  for (; i < n; ++i) {
    if (field[i] != ' ' && field[i] != '\0') return false;
  }
  return any;
}

bool checksum_ok(const unsigned char* h) {
  uint64_t stored = 0;
  if (!parse_number(reinterpret_cast<const char*>(h) + 148, 8, stored)) return false;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
  return sum == stored;
}

std::string field(const unsigned char* h, size_t off, size_t n) {
  const char* p = reinterpret_cast<const char*>(h) + off;
  return std::string(p, strnlen(p, n));
}

// The "path" record of a PAX extended header ("LEN path=VALUE\n" records), or "".
std::string pax_path(const std::string& data) {
  size_t pos = 0;
  while (pos < data.size()) {
    size_t len = 0;
    const auto [end, ec] = std::from_chars(data.data() + pos, data.data() + data.size(), len);
    if (ec != std::errc() || len == 0 || pos + len > data.size()) break;
    const std::string_view rec(end + 1, data.data() + pos + len - (end + 1));
    if (rec.starts_with("path=")) return std::string(rec.substr(5, rec.size() - 6));
    pos += len;
  }
  return {};
}

// WebDataset: key = the path up to the first '.' of its last component; ext = the rest.
std::pair<std::string_view, std::string_view> split_key(std::string_view name) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.find('.', slash == std::string_view::npos ? 0 : slash + 1);
  if (dot == std::string_view::npos) return {name, {}};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

bool ext_is(std::string_view ext, std::string_view want) {
  return ext.size() == want.size() &&
         std::equal(ext.begin(), ext.end(), want.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

TarShardSource::TarShardSource(const std::vector<std::string>& inputs) {
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in, ec)) {
        if (e.path().extension() == ".tar") found.push_back(e.path().string());
      }
      if (ec) throw Error(in, "cannot be read: " + ec.message(), "check the folder's permissions");
      std::sort(found.begin(), found.end());
      shards_.insert(shards_.end(), found.begin(), found.end());
    } else {
      shards_.push_back(in);
    }
  }
  if (shards_.empty()) {
    throw Error(inputs.empty() ? std::string("tar shards") : inputs.front(), "no tar shards given",
                "pass .tar files or a folder holding them");
  }
  fingerprint_ = kFnvOffset;
  for (uint32_t s = 0; s < shards_.size(); ++s) index_shard(s);
  if (samples_.empty()) {
    throw Error(shards_.front(), "the tar shards hold no JPEG samples",
                "expected members like KEY.jpg (+ KEY.cls) in WebDataset naming");
  }
}

void TarShardSource::index_shard(uint32_t shard) {
  const std::string& path = shards_[shard];
  ShardReader r(path);
  std::array<unsigned char, kBlock> h{};
  std::string long_name, key;
  Entry pending;
  bool has_image = false;
  auto flush = [&] {
    if (has_image) {
      samples_.push_back(pending);
      fingerprint_ = fnv1a(static_cast<uint64_t>(pending.label), fingerprint_);
    }
    pending = Entry{};
    pending.shard = shard;
    has_image = false;
  };
  flush();
  uint64_t offset = 0;
  while (offset < r.size()) {  // a tar normally ends with zero blocks before this
    r.read(offset, h.data(), kBlock, "a member header");
    if (std::all_of(h.begin(), h.end(), [](unsigned char c) { return c == 0; })) break;  // end
    if (!checksum_ok(h.data())) {
      throw Error(at(path, offset), "bad tar header checksum (corrupt or not a tar file)",
                  "re-create or re-download the shard");
    }
    uint64_t size = 0;
    if (!parse_number(reinterpret_cast<const char*>(h.data()) + 124, 12, size)) {
      throw Error(at(path, offset), "bad member size field in the tar header");
    }
    const char type = static_cast<char>(h[156]);
    const uint64_t data = offset + kBlock;
    const uint64_t next = data + (size + kBlock - 1) / kBlock * kBlock;
    r.check_range(data, size, "member '" + field(h.data(), 0, 100) + "'");
    if (type == 'L' || type == 'x') {  // GNU long name, or PAX header, for the next member
      std::string text(size, '\0');
      r.read(data, text.data(), size, "a long-name record");
      long_name = type == 'L' ? std::string(text.c_str()) : pax_path(text);
      offset = next;
      continue;
    }
    if (type == '0' || type == '\0' || type == '7') {  // a regular file
      std::string name = field(h.data(), 0, 100);
      const std::string prefix = field(h.data(), 345, 155);
      if (!long_name.empty()) {
        name = long_name;
      } else if (!prefix.empty() && std::memcmp(h.data() + 257, "ustar", 5) == 0) {
        name = prefix + "/" + name;
      }
      const auto [k, ext] = split_key(name);
      if (k != key) {
        flush();
        key = std::string(k);
      }
      if (ext_is(ext, "jpg") || ext_is(ext, "jpeg")) {
        pending.offset = data;
        pending.size = size;
        has_image = true;
        total_bytes_ += size;
        fingerprint_ = fnv1a(size, fnv1a(name, fingerprint_));
      } else if (ext_is(ext, "cls")) {
        char text[32] = {};
        if (size == 0 || size >= sizeof text) {
          throw Error(at(path, data), "label member '" + name + "' is not an integer");
        }
        r.read(data, text, size, "a label member");
        const char* end = text + size;
        while (end > text && std::isspace(static_cast<unsigned char>(end[-1]))) --end;
        const char* begin = text;
        while (begin < end && std::isspace(static_cast<unsigned char>(*begin))) ++begin;
        const auto [stop, ec] = std::from_chars(begin, end, pending.label);
        if (ec != std::errc() || stop != end) {
          throw Error(at(path, data), "label member '" + name + "' is not an integer: '" +
                                          std::string(begin, end) + "'");
        }
      }
    }
    long_name.clear();
    offset = next;
  }
  flush();
}

RawSample TarShardSource::read(uint64_t index, std::vector<std::byte>& scratch) const {
  const Entry& e = samples_[index];
  return {pread_sample(shards_[e.shard].c_str(), e.offset, e.size, index, scratch), e.label};
}

std::string TarShardSource::location(uint64_t index) const {
  if (index >= samples_.size()) return "tar shards[" + std::to_string(index) + "]";
  const Entry& e = samples_[index];
  return at(shards_[e.shard], e.offset);
}

std::string TarShardSource::describe() const {
  return "tar shards (" + std::to_string(shards_.size()) + ", first " + shards_.front() +
         "): " + std::to_string(samples_.size()) + " JPEG samples, " +
         std::to_string(total_bytes_ / (1024 * 1024)) + " MiB";
}

}  // namespace stoker
