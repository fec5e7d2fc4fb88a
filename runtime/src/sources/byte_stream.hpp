// A shard file read from start to end: plain, gzip or zstd (decided by its first bytes,
// never its name), in file reads of a fixed, large size, decompressed through a window.
// Streaming uses reads of kStreamReadBytes and never seeks; the index pass over a plain
// .tar for random access uses small reads and seeks over the members' data.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/sources/shard_stream.hpp"

struct ZSTD_DCtx_s;

namespace stoker {

// The shard's data ends before its end-of-archive (a cut or half-copied shard): what the
// readers turn into one skippable sample for the rest of the shard. where() is
// "SHARD@OFFSET", `at` the offset in the (decompressed) tar data where it ends.
struct ShardCut : Error {
  ShardCut(const std::string& shard, uint64_t at, const std::string& what);
  uint64_t at = 0;
};

inline constexpr size_t kStreamReadBytes = size_t{4} << 20;  // one read() while streaming
inline constexpr size_t kMinStreamReadBytes = size_t{1} << 20;

class ByteStream {
 public:
  enum class Codec { Plain, Gzip, Zstd };
  // Throws stoker::Error naming the file when it cannot be opened or read.
  // `seek_over`: skip() may lseek over plain data longer than one read (index passes).
  ByteStream(std::string path, size_t read_bytes, bool seek_over);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Copies the next n bytes to `out`. Returns false when the stream ends cleanly before
  // the first of them; throws ShardCut (naming `what` + `name` and the offset) when it
  // ends inside them or inside a compressed frame, stoker::Error for corrupt compressed data.
  bool read(void* out, size_t n, std::string_view what, std::string_view name = {});
  // Passes over the next n bytes (same errors as read()).
  void skip(uint64_t n, std::string_view what, std::string_view name = {});

  const std::string& path() const { return path_; }
  Codec codec() const { return codec_; }
  uint64_t offset() const { return offset_; }        // in the decompressed stream
  uint64_t file_size() const { return file_size_; }  // the file's, as fstat gave it at open
  const ReadCounters& counters() const { return counters_; }

 private:
  size_t read_file();  // one read() into in_; 0 at the file's end
  bool fill();         // makes decoded bytes available; false at the stream's end
  bool fill_gzip();
  bool fill_zstd();
  [[noreturn]] void truncated(std::string_view what, std::string_view name, uint64_t need) const;
  [[noreturn]] void cut_inside_frame() const;
  [[noreturn]] void corrupt(const std::string& why) const;

  std::string path_;
  int fd_ = -1;
  bool seek_over_ = false, file_end_ = false, frame_done_ = true;
  Codec codec_ = Codec::Plain;
  uint64_t file_size_ = 0, file_offset_ = 0, offset_ = 0;
  std::vector<std::byte> in_, out_;
  const std::byte* win_ = nullptr;  // decoded bytes not consumed yet
  size_t win_len_ = 0;
  size_t in_pos_ = 0, in_len_ = 0;  // compressed input not consumed yet: in_[in_pos_, in_len_)
  z_stream z_{};
  ZSTD_DCtx_s* zstd_ = nullptr;
  ReadCounters counters_;
};

}  // namespace stoker
