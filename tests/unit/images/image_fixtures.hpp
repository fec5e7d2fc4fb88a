// Test data for the image tests: a temporary folder and JPEG files written by project code
// (WebDataset shards: tests/support/tar_writer.hpp).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tar_writer.hpp"
#include "transforms/jpeg_encoder.hpp"

namespace stoker::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "stoker-images-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline std::vector<std::byte> test_jpeg(int w, int h, uint64_t seed, int quality = 90) {
  return encode_jpeg(synthetic_image(w, h, seed), w, h, quality);
}

inline void write_file(const std::string& path, const void* data, size_t n) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
}
inline void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  write_file(path, bytes.data(), bytes.size());
}
inline void write_file(const std::string& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}

}  // namespace stoker::test
