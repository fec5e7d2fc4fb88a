#include "sources/byte_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sources/tar_format.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

namespace {

constexpr size_t kWindowBytes = size_t{128} << 10;  // decompressed bytes per inflate call

const char* codec_name(ByteStream::Codec c) {
  return c == ByteStream::Codec::Gzip ? "gzip" : c == ByteStream::Codec::Zstd ? "zstd" : "plain";
}

}  // namespace

ShardCut::ShardCut(const std::string& shard, uint64_t offset, const std::string& what)
    : Error(tar::at(shard, offset), what,
            "re-create or re-download the shard; with on_corrupt='skip' the samples before "
            "the cut are read and the rest of the shard is one skipped sample"),
      at(offset) {}

ByteStream::ByteStream(std::string path, size_t read_bytes, bool seek_over)
    : path_(std::move(path)), seek_over_(seek_over), in_(std::max<size_t>(read_bytes, 512)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw Error(path_, std::string("cannot open tar shard: ") + std::strerror(err),
                "check the shard list");
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  if (!seek_over_) ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  in_len_ = read_file();
  const auto* b = reinterpret_cast<const unsigned char*>(in_.data());
  if (in_len_ >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    codec_ = Codec::Gzip;
    if (inflateInit2(&z_, 15 + 32) != Z_OK) corrupt("zlib cannot start");  // gzip header
  } else if (in_len_ >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    codec_ = Codec::Zstd;
    zstd_ = ZSTD_createDCtx();
    if (zstd_ == nullptr) corrupt("zstd cannot start");
  } else {
    win_ = in_.data();
    win_len_ = in_len_;
    in_len_ = 0;
  }
  if (codec_ != Codec::Plain) out_.resize(kWindowBytes);
}

ByteStream::~ByteStream() {
  if (codec_ == Codec::Gzip) inflateEnd(&z_);
  if (zstd_ != nullptr) ZSTD_freeDCtx(zstd_);
  ::close(fd_);
}

size_t ByteStream::read_file() {
  if (file_end_) return 0;
  size_t got = 0;
  while (got < in_.size()) {  // one read() normally; more only after a short one
    const ssize_t r = ::read(fd_, in_.data() + got, in_.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      throw Error(tar::at(path_, file_offset_),
                  std::string("cannot read tar shard: ") + std::strerror(errno),
                  "check the storage the shard is on");
    }
    if (r == 0) {
      file_end_ = true;
      break;
    }
    ++counters_.reads;
    counters_.bytes += static_cast<uint64_t>(r);
    counters_.largest = std::max<uint64_t>(counters_.largest, static_cast<uint64_t>(r));
    file_offset_ += static_cast<uint64_t>(r);
    got += static_cast<size_t>(r);
    if (file_offset_ >= file_size_) break;  // the file's end: no extra read() for the 0
  }
  return got;
}

[[noreturn]] void ByteStream::truncated(std::string_view what, std::string_view name,
                                        uint64_t need) const {
  std::string thing(what);
  if (!name.empty()) thing += " '" + std::string(name) + "'";
  throw ShardCut(path_, offset_,
                 "truncated tar shard: " + thing + " needs " + std::to_string(need) +
                     " more bytes, the " + codec_name(codec_) + " stream ends here (byte " +
                     std::to_string(offset_) + " of the tar data, " + std::to_string(file_size_) +
                     " bytes in the file)");
}

[[noreturn]] void ByteStream::cut_inside_frame() const {
  throw ShardCut(path_, offset_,
                 std::string("truncated tar shard: the ") + codec_name(codec_) +
                     " stream ends inside a compressed frame, at byte " + std::to_string(offset_) +
                     " of the tar data (" + std::to_string(file_size_) + " bytes in the file)");
}

[[noreturn]] void ByteStream::corrupt(const std::string& why) const {
  throw Error(tar::at(path_, offset_),
              std::string("corrupt ") + codec_name(codec_) + " data in the tar shard: " + why,
              "re-create or re-download the shard");
}

bool ByteStream::fill() {
  if (win_len_ > 0) return true;
  switch (codec_) {
    case Codec::Gzip:
      return fill_gzip();
    case Codec::Zstd:
      return fill_zstd();
    case Codec::Plain:
      break;
  }
  win_len_ = read_file();
  win_ = in_.data();
  return win_len_ > 0;
}

bool ByteStream::fill_gzip() {
  for (;;) {
    if (z_.avail_in == 0) {
      if (in_pos_ < in_len_) {
        z_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
        z_.avail_in = static_cast<uInt>(in_len_ - in_pos_);
        in_pos_ = in_len_;
      } else if ((in_len_ = read_file()) > 0) {
        in_pos_ = in_len_;
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(in_len_);
      } else {
        if (!frame_done_) cut_inside_frame();
        return false;
      }
    }
    if (frame_done_) {  // a gzip member starts (a file may hold several, back to back)
      if (inflateReset(&z_) != Z_OK) corrupt("zlib cannot restart");
      frame_done_ = false;
    }
    z_.next_out = reinterpret_cast<Bytef*>(out_.data());
    z_.avail_out = static_cast<uInt>(out_.size());
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      frame_done_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      corrupt(z_.msg != nullptr ? z_.msg : "inflate error " + std::to_string(rc));
    }
    win_len_ = out_.size() - z_.avail_out;
    win_ = out_.data();
    if (win_len_ > 0) return true;
  }
}

bool ByteStream::fill_zstd() {
  for (;;) {
    if (in_pos_ == in_len_) {
      in_len_ = read_file();
      in_pos_ = 0;
      if (in_len_ == 0) {
        if (!frame_done_) cut_inside_frame();
        return false;
      }
    }
    ZSTD_inBuffer in{in_.data(), in_len_, in_pos_};
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const size_t rc = ZSTD_decompressStream(zstd_, &out, &in);
    if (ZSTD_isError(rc)) corrupt(ZSTD_getErrorName(rc));
    frame_done_ = rc == 0;
    in_pos_ = in.pos;
    win_len_ = out.pos;
    win_ = out_.data();
    if (win_len_ > 0) return true;
  }
}

bool ByteStream::read(void* out, size_t n, std::string_view what, std::string_view name) {
  auto* dst = static_cast<std::byte*>(out);
  size_t done = 0;
  while (done < n) {
    if (!fill()) {
      if (done == 0) return false;
      truncated(what, name, n - done);
    }
    const size_t take = std::min(win_len_, n - done);
    std::memcpy(dst + done, win_, take);
    win_ += take;
    win_len_ -= take;
    done += take;
    offset_ += take;
  }
  return true;
}

void ByteStream::skip(uint64_t n, std::string_view what, std::string_view name) {
  const uint64_t in_window = std::min<uint64_t>(n, win_len_);
  win_ += in_window;
  win_len_ -= in_window;
  offset_ += in_window;
  n -= in_window;
  if (n > 0 && codec_ == Codec::Plain && seek_over_ && n > in_.size()) {
    if (file_offset_ + n > file_size_) truncated(what, name, n);
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) corrupt(std::strerror(errno));
    file_offset_ += n;
    offset_ += n;
    return;
  }
  while (n > 0) {
    if (!fill()) truncated(what, name, n);
    const uint64_t take = std::min<uint64_t>(win_len_, n);
    win_ += take;
    win_len_ -= take;
    offset_ += take;
    n -= take;
  }
}

}  // namespace stoker
