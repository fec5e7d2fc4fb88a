// Where one thread's JPEG decode time goes (what decoding less could save): libjpeg-turbo's full
// decode of the same images with one stage changed at a time. The differences give the
// cost of colour conversion, of fancy (triangle) chroma upsampling, of the accurate IDCT
// and, by skipping every row, of entropy decoding alone. The variants that change pixels
// report their error against the accurate decode (mean and max |diff|, 0-255 units).
//
//   build/benchmarks/bench_jpeg_stages                      # synthetic 500x375 JPEGs
//   STOKER_BENCH_IMAGES=bench-data/images build/benchmarks/bench_jpeg_stages
#include <benchmark/benchmark.h>
#include <jpeglib.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_images.hpp"

namespace {

using namespace stoker;

const std::vector<std::vector<std::byte>>& images() {
  static const auto all = load_bench_images(200);
  return all;
}

enum Variant { kAccurate, kNoColour, kNoFancy, kFastIdct, kFastBoth, kEntropyOnly };

// One decode of `img` in the variant; the pixels go to `out` (3 bytes a pixel).
void decode(jpeg_decompress_struct& c, const std::vector<std::byte>& img, Variant v,
            std::vector<uint8_t>& out) {
  jpeg_mem_src(&c, reinterpret_cast<const unsigned char*>(img.data()),
               static_cast<unsigned long>(img.size()));
  jpeg_read_header(&c, TRUE);
  c.out_color_space = v == kNoColour ? JCS_YCbCr : JCS_RGB;
  c.do_fancy_upsampling = v == kNoFancy || v == kFastBoth ? FALSE : TRUE;
  c.dct_method = v == kFastIdct || v == kFastBoth ? JDCT_IFAST : JDCT_ISLOW;
  jpeg_start_decompress(&c);
  const size_t stride = static_cast<size_t>(c.output_width) * 3;
  out.resize(stride * c.output_height);
  if (v == kEntropyOnly) {  // whole iMCU rows are entropy-decoded and discarded
    jpeg_skip_scanlines(&c, c.output_height - 1);
  }
  while (c.output_scanline < c.output_height) {
    JSAMPROW row = out.data() + stride * c.output_scanline;
    jpeg_read_scanlines(&c, &row, 1);
  }
  jpeg_finish_decompress(&c);
}

void BM_JpegStage(benchmark::State& state) {
  const auto v = static_cast<Variant>(state.range(0));
  jpeg_decompress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_decompress(&c);
  std::vector<uint8_t> out, ref;
  double diff = 0, count = 0, worst = 0;
  if (v == kNoFancy || v == kFastIdct || v == kFastBoth) {  // the error, before the clock
    for (const auto& img : images()) {
      decode(c, img, kAccurate, ref);
      decode(c, img, v, out);
      for (size_t i = 0; i < out.size(); ++i) {
        const double d = std::abs(static_cast<int>(out[i]) - static_cast<int>(ref[i]));
        diff += d;
        worst = std::max(worst, d);
      }
      count += static_cast<double>(out.size());
    }
  }
  size_t i = 0;
  for (auto _ : state) decode(c, images()[i++ % images().size()], v, out);
  jpeg_destroy_decompress(&c);
  state.SetItemsProcessed(state.iterations());
  if (count > 0) {
    state.counters["mean_abs_diff"] = diff / count;
    state.counters["max_abs_diff"] = worst;
  }
}
BENCHMARK(BM_JpegStage)
    ->ArgName("variant")
    ->Arg(kAccurate)
    ->Arg(kNoColour)
    ->Arg(kNoFancy)
    ->Arg(kFastIdct)
    ->Arg(kFastBoth)
    ->Arg(kEntropyOnly)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  std::printf(
      "variants: 0 accurate (ISLOW, fancy upsampling, RGB), 1 no colour conversion "
      "(YCbCr out), 2 no fancy upsampling, 3 fast IDCT, 4 both 2 and 3, 5 entropy "
      "decoding only\n");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
