#include "transforms/jpeg_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "transforms/counter_rng.hpp"
#include "transforms/jpeg_decoder.hpp"

namespace stoker {

namespace {

// Owns libjpeg's output buffer (malloc'ed by jpeg_mem_dest) and the compressor.
struct Compressor {
  jpeg_compress_struct cinfo{};
  JpegErrors err{};
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  ~Compressor() {
    jpeg_destroy_compress(&cinfo);
    std::free(out);
  }
};

// Adobe-inverted CMYK (as stored) whose PIL conversion gives back `rgb`: K = the brightest
// channel m, each stored ink = channel * 255 / m.
std::vector<uint8_t> to_stored_cmyk(const uint8_t* rgb, size_t pixels) {
  std::vector<uint8_t> out(pixels * 4);
  for (size_t i = 0; i < pixels; ++i) {
    const uint8_t* p = rgb + i * 3;
    const int m = std::max({p[0], p[1], p[2]});
    for (int c = 0; c < 3; ++c)
      out[i * 4 + c] = m ? static_cast<uint8_t>((p[c] * 255 + m / 2) / m) : 255;
    out[i * 4 + 3] = static_cast<uint8_t>(m);
  }
  return out;
}

void set_kind(jpeg_compress_struct& ci, const JpegKind& kind) {
  if (kind.colour == JpegColour::Grey) jpeg_set_colorspace(&ci, JCS_GRAYSCALE);
  if (kind.colour == JpegColour::Ycck) jpeg_set_colorspace(&ci, JCS_YCCK);
  if (kind.colour == JpegColour::Cmyk) ci.write_Adobe_marker = kind.adobe_marker ? TRUE : FALSE;
  const bool luma_chroma = kind.colour == JpegColour::YCbCr || kind.colour == JpegColour::Ycck;
  for (int i = 0; i < ci.num_components; ++i) {
    const bool luma = i == 0 || (kind.colour == JpegColour::Ycck && i == 3);
    ci.comp_info[i].h_samp_factor = luma_chroma && luma ? kind.h_samp : 1;
    ci.comp_info[i].v_samp_factor = luma_chroma && luma ? kind.v_samp : 1;
  }
  if (kind.progressive) jpeg_simple_progression(&ci);
  ci.restart_in_rows = kind.restart_rows;
}

void compress(Compressor& c, const uint8_t* pixels, int width, int height, int quality,
              const JpegKind& kind) {
  if (setjmp(c.err.jump)) throw std::runtime_error(c.err.message);
  jpeg_create_compress(&c.cinfo);
  jpeg_mem_dest(&c.cinfo, &c.out, &c.out_size);
  const bool cmyk = kind.colour == JpegColour::Cmyk || kind.colour == JpegColour::Ycck;
  c.cinfo.image_width = static_cast<JDIMENSION>(width);
  c.cinfo.image_height = static_cast<JDIMENSION>(height);
  c.cinfo.input_components = cmyk ? 4 : 3;
  c.cinfo.in_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&c.cinfo);
  jpeg_set_quality(&c.cinfo, quality, TRUE);
  set_kind(c.cinfo, kind);
  jpeg_start_compress(&c.cinfo, TRUE);
  const size_t row_bytes = static_cast<size_t>(width) * c.cinfo.input_components;
  while (c.cinfo.next_scanline < c.cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + c.cinfo.next_scanline * row_bytes);
    jpeg_write_scanlines(&c.cinfo, &row, 1);
  }
  jpeg_finish_compress(&c.cinfo);
}

}  // namespace

std::vector<std::byte> encode_jpeg(std::span<const uint8_t> rgb, int width, int height, int quality,
                                   const JpegKind& kind) {
  if (width <= 0 || height <= 0 || rgb.size() < static_cast<size_t>(width) * height * 3) {
    throw std::runtime_error("encode_jpeg: pixel buffer smaller than width x height x 3");
  }
  std::vector<uint8_t> cmyk;
  if (kind.colour == JpegColour::Cmyk || kind.colour == JpegColour::Ycck) {
    cmyk = to_stored_cmyk(rgb.data(), static_cast<size_t>(width) * height);
  }
  Compressor c;
  c.cinfo.err = c.err.init();
  compress(c, cmyk.empty() ? rgb.data() : cmyk.data(), width, height, quality, kind);
  const auto* p = reinterpret_cast<const std::byte*>(c.out);
  return {p, p + c.out_size};
}

std::vector<std::byte> encode_jpeg(std::span<const uint8_t> rgb, int width, int height, int quality,
                                   bool subsample) {
  JpegKind kind;
  if (!subsample) kind.h_samp = kind.v_samp = 1;
  return encode_jpeg(rgb, width, height, quality, kind);
}

std::vector<uint8_t> synthetic_image(int width, int height, uint64_t seed) {
  CounterRng rng({seed, 0, 0}, 7);
  double base[3], gx[3], gy[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = rng.uniform(40, 200);
    gx[c] = rng.uniform(-80, 80);
    gy[c] = rng.uniform(-80, 80);
  }
  struct Blob {
    double x, y, r, amp[3];
  } blobs[5];
  for (auto& b : blobs) {
    b.x = rng.uniform(0, width);
    b.y = rng.uniform(0, height);
    b.r = rng.uniform(0.05, 0.3) * (width + height);
    for (double& a : b.amp) a = rng.uniform(-70, 70);
  }
  const double fx = rng.uniform(0.02, 0.1), fy = rng.uniform(0.02, 0.1);
  std::vector<uint8_t> img(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double u = static_cast<double>(x) / width, v = static_cast<double>(y) / height;
      const double texture = 12 * std::sin(x * fx + 3 * std::sin(y * fy));
      for (int c = 0; c < 3; ++c) {
        double value = base[c] + gx[c] * u + gy[c] * v + texture;
        for (const Blob& b : blobs) {
          const double dx = x - b.x, dy = y - b.y;
          value += b.amp[c] * std::exp(-(dx * dx + dy * dy) / (b.r * b.r));
        }
        img[(static_cast<size_t>(y) * width + x) * 3 + c] =
            static_cast<uint8_t>(std::lround(std::fmin(255.0, std::fmax(0.0, value))));
      }
    }
  }
  return img;
}

}  // namespace stoker
