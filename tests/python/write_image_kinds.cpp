// Writes the image kinds PIL cannot write, for the Python tests that compare stoker's
// decode with PIL's: YCCK JPEGs (Pillow has no YCCK encoder), restart markers (Pillow 9.4
// has no option for them), a CMYK JPEG without Adobe's marker, and interlaced PNGs.
//   stoker_write_image_kinds OUTDIR
#include <cstdio>
#include <string>

#include "image_fixtures.hpp"

using namespace stoker;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int w = 97, h = 61;
  const std::vector<uint8_t> rgb = synthetic_image(w, h, 3);
  const std::pair<const char*, JpegKind> jpegs[] = {
      {"ycck.jpg", {JpegColour::Ycck, 2, 2, false, 0, true}},
      {"ycck_progressive.jpg", {JpegColour::Ycck, 2, 1, true, 0, true}},
      {"restarts.jpg", {JpegColour::YCbCr, 2, 2, false, 1, true}},
      {"cmyk_no_adobe.jpg", {JpegColour::Cmyk, 1, 1, false, 0, false}},
  };
  for (const auto& [name, kind] : jpegs)
    test::write_file(dir + "/" + name, encode_jpeg(rgb, w, h, 90, kind));
  test::write_file(dir + "/interlaced_rgb.png",
                   test::encode_png({w, h, 8, PNG_COLOR_TYPE_RGB, true, {}, {}}, rgb));
  std::vector<uint8_t> grey16;  // big-endian samples, half of them below 256
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
    const unsigned v = (rgb[i * 3] % 2) ? rgb[i * 3 + 1] : rgb[i * 3 + 1] * 257u;
    grey16.push_back(static_cast<uint8_t>(v >> 8));
    grey16.push_back(static_cast<uint8_t>(v));
  }
  test::write_file(dir + "/interlaced_grey16.png",
                   test::encode_png({w, h, 16, PNG_COLOR_TYPE_GRAY, true, {}, {}}, grey16));
  return 0;
}
