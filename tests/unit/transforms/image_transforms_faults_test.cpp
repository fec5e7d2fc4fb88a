// Faults of the image pipeline found against torchvision and fixed (docs/reliability.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "image_fixtures.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/resample.hpp"

namespace stoker {
namespace {

// RandomResizedCrop cuts the crop out, then resizes it (torchvision's F.resized_crop): no
// pixel outside the crop may weigh in. The pass resampled the crop as a box of the whole
// image, so its downscaling filter reached past the crop's edges: on a tiny real PNG the
// border rows were 123 levels from torchvision's.
TEST(FaultsImageTransform, ATrainingCropIsResizedAsIfCutOut) {
  const int w = 64, h = 48, out = 16;
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  std::mt19937 gen(5);
  for (uint8_t& p : px) p = static_cast<uint8_t>(gen() & 0xff);  // an edge at every pixel
  test::PngSpec spec;
  spec.width = w;
  spec.height = h;
  const std::vector<std::byte> png = test::encode_png(spec, px);
  for (Interpolation interpolation : {Interpolation::Bilinear, Interpolation::Bicubic}) {
    ImageTransformOptions o;
    o.size = out;
    o.flip_p = 0;
    o.dtype = DType::U8;
    o.layout = Layout::HWC;
    o.interpolation = interpolation;
    const auto t = make_image_transform(o);
    Scratch scratch;
    StageTimes times;
    int worst = 0;
    for (uint64_t i = 0; i < 16; ++i) {
      const SampleKey key{9, 0, i};
      std::vector<std::byte> got(t->output_spec().bytes());
      t->apply({png, 0}, key, got.data(), scratch, times);
      // The crop cut out and resized as an image of its own.
      const CropBox c = random_resized_crop(w, h, key, o);
      const int cx = static_cast<int>(c.x), cy = static_cast<int>(c.y);
      const int cw = static_cast<int>(c.w), ch = static_cast<int>(c.h);
      std::vector<uint8_t> cut;
      for (int y = cy; y < cy + ch; ++y) {
        const uint8_t* row = &px[(static_cast<size_t>(y) * w + cx) * 3];
        cut.insert(cut.end(), row, row + cw * 3);
      }
      ResampleBox box{0, 0, c.w, c.h, cw, ch, out};
      box.interpolation = interpolation;
      std::vector<int> starts;
      std::vector<float> weights;
      const BoxWeights bw = box_weights(box, starts, weights);
      const DecodedRegion r{cut.data(), static_cast<size_t>(cw) * 3, 0, 0, cw, ch};
      std::vector<uint8_t> want(static_cast<size_t>(out) * out * 3);
      const ResampleTarget target{want.data(), out, out, DType::U8, Layout::HWC};
      if (interpolation == Interpolation::Bicubic) {
        resample_two_pass(r, bw.h, bw.v, false, {}, target);
      } else {
        std::vector<float> work(resample_work_floats(bw.h, bw.v, out));
        resample(r, bw.h, bw.v, false, {}, target, work.data());
      }
      for (size_t k = 0; k < want.size(); ++k) {
        worst = std::max(worst, std::abs(static_cast<int>(got[k]) - want[k]));
      }
    }
    // Float rounding only: the taps sit at other offsets of the same weights.
    EXPECT_LE(worst, 1) << to_string(interpolation);
  }
}

}  // namespace
}  // namespace stoker
