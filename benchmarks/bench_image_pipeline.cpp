// One thread, in memory: libjpeg-turbo's full decode vs stoker's region decode + fused
// transform, on synthetic photo-like 500x375 JPEGs (quality 90). These are the per-core
// limits the side-by-side benchmark compares the loader with (benchmarks/side_by_side.sh).
// Set STOKER_BENCH_IMAGES=DIR to use the JPEGs of an image folder instead.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "bench_images.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/jpeg_decoder.hpp"
#include "transforms/resample.hpp"

namespace {

using namespace stoker;

const std::vector<std::vector<std::byte>>& images() {
  static const auto all = load_bench_images(500);
  return all;
}

void BM_FullDecode(benchmark::State& state) {
  images();  // made before the clock starts
  JpegDecoder dec;
  std::vector<std::byte> buf;
  size_t i = 0;
  for (auto _ : state) {
    const auto& img = images()[i++ % images().size()];
    benchmark::DoNotOptimize(dec.decode_full(img, 1, buf).data);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FullDecode)->Unit(benchmark::kMicrosecond);

void BM_Pipeline(benchmark::State& state) {
  images();
  ImageTransformOptions o;
  o.train = state.range(0) == 1;
  o.dtype = state.range(1) == 0 ? DType::F32 : DType::U8;
  o.dct_scaling = state.range(2) == 1;
  const auto t = make_image_transform(o);
  std::vector<std::byte> out(t->output_spec().bytes());
  Scratch scratch;
  StageTimes times;
  uint64_t i = 0;
  for (auto _ : state) {
    const auto& img = images()[i % images().size()];
    t->apply({img, 0}, {0, 0, i++}, out.data(), scratch, times);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["decode_us"] = static_cast<double>(times.decode_ns) / 1e3 / state.iterations();
  state.counters["transform_us"] =
      static_cast<double>(times.transform_ns) / 1e3 / state.iterations();
}
// train/eval x float32/uint8 x DCT scaling off/on
BENCHMARK(BM_Pipeline)
    ->ArgNames({"train", "u8", "dct"})
    ->Args({1, 0, 1})
    ->Args({1, 0, 0})
    ->Args({1, 1, 1})
    ->Args({0, 0, 1})
    ->Unit(benchmark::kMicrosecond);

// The fused resample pass alone, per kernel: a 448x400 crop of a 640x480 region to 224x224
// (5 taps a side, RandomResizedCrop's common case), float32 CHW or uint8 HWC.
void BM_Resample(benchmark::State& state) {
  const auto kernel = static_cast<ResampleKernel>(state.range(0));
  if (!resample_kernel_available(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  const bool u8 = state.range(1) == 1;
  const int w = 640, h = 480, out = 224;
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  const DecodedRegion r{px.data(), static_cast<size_t>(w) * 3, 0, 0, w, h};
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights axes = box_weights({40.5, 30.25, 448, 400, w, h, out}, starts, weights);
  std::vector<float> work(resample_work_floats(axes.h, axes.v, out, kernel));
  std::vector<float> dst(out * out * 3);
  const ResampleTarget target{dst.data(), out, out, u8 ? DType::U8 : DType::F32,
                              u8 ? Layout::HWC : Layout::CHW};
  for (auto _ : state) {
    resample(r, axes.h, axes.v, true, Normalization{}, target, work.data(), kernel);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Resample)
    ->ArgNames({"avx2", "u8hwc"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
