// Test data for tar shards: a minimal ustar writer (WebDataset members), and gzip and
// zstd compression of a finished archive (with zlib and libzstd, as real shards are made).
#pragma once

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace stoker::test {

// Writes tar members: ustar headers with names up to 100 bytes, or a GNU 'L' long-name
// record before longer ones.
class TarWriter {
 public:
  void add(const std::string& name, const void* data, size_t n) {
    if (name.size() > 100) {
      header("././@LongLink", name.size() + 1, 'L');
      append(name.c_str(), name.size() + 1);
      header(name.substr(0, 100), n, '0');
    } else {
      header(name, n, '0');
    }
    append(data, n);
  }
  void add(const std::string& name, const std::vector<std::byte>& b) {
    add(name, b.data(), b.size());
  }
  void add(const std::string& name, const std::string& text) {
    add(name, text.data(), text.size());
  }
  std::vector<char> finish() {
    out_.resize(out_.size() + 1024, 0);
    return out_;
  }

 private:
  void header(const std::string& name, size_t size, char type) {
    char h[512] = {};
    std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
    std::snprintf(h + 100, 8, "%07o", 0644);
    std::snprintf(h + 108, 8, "%07o", 0);
    std::snprintf(h + 116, 8, "%07o", 0);
    std::snprintf(h + 124, 12, "%011zo", size);
    std::snprintf(h + 136, 12, "%011o", 0);
    h[156] = type;
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    std::snprintf(h + 148, 8, "%06o", sum);
    append(h, 512);
  }
  void append(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    out_.insert(out_.end(), p, p + n);
    out_.resize((out_.size() + 511) / 512 * 512, 0);
  }
  std::vector<char> out_;
};

inline std::vector<char> gzip_bytes(const std::vector<char>& in) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::vector<char> out(deflateBound(&z, in.size()) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

inline std::vector<char> zstd_bytes(const std::vector<char>& in) {
  std::vector<char> out(ZSTD_compressBound(in.size()));
  const size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

}  // namespace stoker::test
