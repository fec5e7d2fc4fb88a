// Test data for the image tests: a temporary folder, JPEG files written by project code and
// PNG files written by libpng (WebDataset shards: tests/support/tar_writer.hpp).
#pragma once

#include <png.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tar_writer.hpp"
#include "transforms/jpeg_encoder.hpp"

namespace stoker::test {

// A fresh temporary folder for image files, removed by the destructor. (Not TempDir: the
// loader tests have one of that name in this namespace, and both link into unit_loader.)
class ImageDir {
 public:
  ImageDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "stoker-images-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~ImageDir() {
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

// A PNG as libpng writes it. `rows` holds height rows of samples exactly as the format
// stores them (16-bit samples big-endian, 1/2/4-bit samples packed from the high bit).
struct PngSpec {
  int width = 0, height = 0, depth = 8;
  int colour = PNG_COLOR_TYPE_RGB;
  bool interlaced = false;
  std::vector<png_color> palette;
  std::vector<uint8_t> palette_alpha;  // tRNS of a palette image
};

inline std::vector<std::byte> encode_png(const PngSpec& spec, std::vector<uint8_t> rows) {
  struct Writer {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    std::vector<std::byte> out;
    ~Writer() { png_destroy_write_struct(&png, &info); }
  } w;
  const size_t row_bytes = rows.size() / static_cast<size_t>(spec.height);
  std::vector<png_bytep> pointers;
  for (int y = 0; y < spec.height; ++y) pointers.push_back(rows.data() + row_bytes * y);
  if (setjmp(png_jmpbuf(w.png))) throw std::runtime_error("encode_png failed");
  png_set_write_fn(
      w.png, &w.out,
      [](png_structp p, png_bytep data, size_t n) {
        auto* out = static_cast<std::vector<std::byte>*>(png_get_io_ptr(p));
        out->insert(out->end(), reinterpret_cast<std::byte*>(data),
                    reinterpret_cast<std::byte*>(data) + n);
      },
      nullptr);
  png_set_IHDR(w.png, w.info, spec.width, spec.height, spec.depth, spec.colour,
               spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!spec.palette.empty()) {
    png_set_PLTE(w.png, w.info, spec.palette.data(), static_cast<int>(spec.palette.size()));
  }
  if (!spec.palette_alpha.empty()) {
    png_set_tRNS(w.png, w.info, spec.palette_alpha.data(),
                 static_cast<int>(spec.palette_alpha.size()), nullptr);
  }
  png_write_info(w.png, w.info);
  png_write_image(w.png, pointers.data());
  png_write_end(w.png, nullptr);
  return std::move(w.out);
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
