// The fused image pipeline: determinism, flip, dtypes and layouts, accuracy against the
// full-resolution path, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "image_fixtures.hpp"
#include "stoker/common/error.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/half.hpp"
#include "transforms/jpeg_decoder.hpp"
#include "transforms/resample.hpp"

namespace stoker {
namespace {

std::vector<std::byte> run(const Transform& t, const std::vector<std::byte>& jpeg, SampleKey key,
                           Scratch& scratch) {
  std::vector<std::byte> out(t.output_spec().bytes());
  StageTimes times;
  t.apply({jpeg, 3}, key, out.data(), scratch, times);
  return out;
}

template <class T>
const T* as(const std::vector<std::byte>& v) {
  return reinterpret_cast<const T*>(v.data());
}

class ImageTransformTest : public ::testing::Test {
 protected:
  std::vector<std::byte> jpeg = test::test_jpeg(500, 375, 21);
  Scratch scratch;
};

TEST_F(ImageTransformTest, OutputSpecAndDescription) {
  ImageTransformOptions o;
  auto t = make_image_transform(o);
  EXPECT_EQ(t->output_spec().shape, (std::vector<int64_t>{3, 224, 224}));
  EXPECT_EQ(t->output_spec().bytes(), 3u * 224 * 224 * 4);
  o.layout = Layout::HWC;
  o.dtype = DType::U8;
  o.size = 160;
  t = make_image_transform(o);
  EXPECT_EQ(t->output_spec().shape, (std::vector<int64_t>{160, 160, 3}));
  EXPECT_EQ(t->output_spec().dtype, DType::U8);
  EXPECT_NE(t->describe().find("RandomResizedCrop(160"), std::string::npos);
}

TEST_F(ImageTransformTest, SameKeySameBytesOtherEpochOtherCrop) {
  auto t = make_image_transform({});
  const auto a = run(*t, jpeg, {1, 0, 5}, scratch);
  Scratch other;  // another worker's scratch gives the same answer
  EXPECT_EQ(a, run(*t, jpeg, {1, 0, 5}, other));
  EXPECT_NE(a, run(*t, jpeg, {1, 1, 5}, scratch));
}

TEST_F(ImageTransformTest, FlipMirrorsTheSameCrop) {
  ImageTransformOptions o;
  o.flip_p = 0;
  const auto plain = run(*make_image_transform(o), jpeg, {3, 0, 9}, scratch);
  o.flip_p = 1;
  const auto flipped = run(*make_image_transform(o), jpeg, {3, 0, 9}, scratch);
  const float* p = as<float>(plain);
  const float* f = as<float>(flipped);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 224; y += 7) {
      for (int x = 0; x < 224; ++x) {
        ASSERT_EQ(f[(c * 224 + y) * 224 + x], p[(c * 224 + y) * 224 + 223 - x]);
      }
    }
  }
}

TEST_F(ImageTransformTest, DtypesAndLayoutsAgree) {
  ImageTransformOptions o;
  const SampleKey key{8, 2, 77};
  const auto chw = run(*make_image_transform(o), jpeg, key, scratch);
  o.layout = Layout::HWC;
  const auto hwc = run(*make_image_transform(o), jpeg, key, scratch);
  o.dtype = DType::U8;
  const auto u8 = run(*make_image_transform(o), jpeg, key, scratch);
  o.layout = Layout::CHW;
  o.dtype = DType::F16;
  const auto f16 = run(*make_image_transform(o), jpeg, key, scratch);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 224 * 224; ++i) {
      const float v = as<float>(chw)[c * 224 * 224 + i];
      ASSERT_EQ(v, as<float>(hwc)[i * 3 + c]);
      ASSERT_NEAR(half_to_float(as<uint16_t>(f16)[c * 224 * 224 + i]), v,
                  2e-3f * std::fabs(v) + 1e-3f);
      const float from_u8 = (as<uint8_t>(u8)[i * 3 + c] / 255.0f - o.mean[c]) / o.std[c];
      ASSERT_NEAR(from_u8, v, 0.51f / 255 / o.std[c] + 1e-5f);
    }
  }
}

TEST_F(ImageTransformTest, ConstantImageGivesTheNormalizedColour) {
  std::vector<uint8_t> px(300 * 200 * 3);
  for (size_t i = 0; i < px.size(); i += 3) {
    px[i] = 200;
    px[i + 1] = 100;
    px[i + 2] = 50;
  }
  const auto flat = encode_jpeg(px, 300, 200, 100, false);
  ImageTransformOptions o;
  const auto out = run(*make_image_transform(o), flat, {0, 0, 0}, scratch);
  const float want[3] = {200, 100, 50};
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 224 * 224; i += 97) {
      ASSERT_NEAR(as<float>(out)[c * 224 * 224 + i], (want[c] / 255 - o.mean[c]) / o.std[c], 0.03);
    }
  }
}

// The region path equals resampling the full-resolution decode; DCT scaling stays close.
TEST_F(ImageTransformTest, RegionAndDctPathsMatchTheFullDecode) {
  ImageTransformOptions o;
  o.train = false;
  o.dct_scaling = false;
  o.dtype = DType::U8;
  o.layout = Layout::HWC;
  o.size = 96;
  o.resize_shorter = 110;  // eval box ~ 327 px: >= 2x the output, so DCT scaling applies below
  const auto region = run(*make_image_transform(o), jpeg, {}, scratch);
  // Reference: decode everything, resample the same box with the same filter.
  JpegDecoder dec;
  std::vector<std::byte> buf;
  const DecodedRegion full = dec.decode_full(jpeg, 1, buf);
  const CropBox box = center_crop(500, 375, o);
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights w = box_weights({box.x, box.y, box.w, box.h, 500, 375, 96}, starts, weights);
  std::vector<float> work(resample_work_floats(w.h, w.v, 96));
  std::vector<uint8_t> ref(96 * 96 * 3);
  resample(full, w.h, w.v, false, {}, {ref.data(), 96, 96, DType::U8, Layout::HWC}, work.data());
  EXPECT_EQ(0, std::memcmp(ref.data(), region.data(), ref.size()));

  o.dct_scaling = true;
  const auto scaled = run(*make_image_transform(o), jpeg, {}, scratch);
  double diff = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    diff += std::abs(int(ref[i]) - int(as<uint8_t>(scaled)[i]));
  EXPECT_LT(diff / ref.size(), 2.0);
  EXPECT_GT(diff, 0.0);  // it did take the scaled path
}

TEST(Resample, ReproducesALinearRampAwayFromTheBorders) {
  // value = x (R), y (G), 100 (B). A widened triangle sampled at whole pixels (PIL's rule)
  // reproduces a linear ramp to within a few hundredths of a level.
  const int w = 200, hgt = 150;
  std::vector<uint8_t> px(w * hgt * 3);
  for (int y = 0; y < hgt; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[(y * w + x) * 3];
      p[0] = static_cast<uint8_t>(x);
      p[1] = static_cast<uint8_t>(y);
      p[2] = 100;
    }
  }
  const DecodedRegion r{px.data(), static_cast<size_t>(w) * 3, 0, 0, w, hgt};
  const int out = 50;  // box 20..180 x 10..130 -> 50x50: downscale 3.2 and 2.4
  std::vector<int> starts;
  std::vector<float> weights;
  const BoxWeights axes = box_weights({20, 10, 160, 120, w, hgt, out}, starts, weights);
  std::vector<float> work(resample_work_floats(axes.h, axes.v, out));
  std::vector<float> res(out * out * 3);
  Normalization unit;
  unit.scale = {1, 1, 1};
  resample(r, axes.h, axes.v, false, unit, {res.data(), out, out, DType::F32, Layout::HWC},
           work.data());
  for (int y = 0; y < out; ++y) {
    for (int x = 0; x < out; ++x) {
      const float* p = &res[(y * out + x) * 3];
      ASSERT_NEAR(p[0], 20 + (x + 0.5) * 3.2 - 0.5, 0.05) << x;
      ASSERT_NEAR(p[1], 10 + (y + 0.5) * 2.4 - 0.5, 0.05) << y;
      ASSERT_NEAR(p[2], 100, 1e-3);
    }
  }
}

TEST_F(ImageTransformTest, CorruptJpegIsASampleErrorWithTheIndex) {
  auto t = make_image_transform({});
  std::vector<std::byte> out(t->output_spec().bytes());
  StageTimes times;
  std::vector<std::byte> cut(jpeg.begin(), jpeg.begin() + 300);
  std::vector<std::byte> junk(5000, std::byte{7});
  std::vector<std::byte> empty;
  for (const auto* bad : {&cut, &junk, &empty}) {
    try {
      t->apply({*bad, 0}, {0, 0, 41}, out.data(), scratch, times);
      FAIL() << "no error";
    } catch (const SampleError& e) {
      EXPECT_EQ(e.index, 41u);
      EXPECT_NE(e.what.find("cannot decode image"), std::string::npos) << e.what;
    }
  }
  EXPECT_NO_THROW(t->apply({jpeg, 0}, {0, 0, 1}, out.data(), scratch, times));
  EXPECT_GT(times.decode_ns, 0u);
  EXPECT_GT(times.transform_ns, 0u);
}

// A PNG takes the same fused path as a JPEG of the same pixels, without DCT scaling.
TEST_F(ImageTransformTest, PngGoesThroughTheSamePipeline) {
  const int w = 500, h = 375;
  const auto px = synthetic_image(w, h, 21);
  const auto png = test::encode_png({w, h, 8, PNG_COLOR_TYPE_RGB, false, {}, {}}, px);
  const auto lossless_ish = encode_jpeg(px, w, h, 100, false);
  ImageTransformOptions o;
  o.train = false;
  o.dtype = DType::U8;
  o.layout = Layout::HWC;
  o.size = 96;
  o.resize_shorter = 110;  // a box >= 2x the output: a JPEG would be DCT-scaled
  o.dct_scaling = false;
  const auto from_png = run(*make_image_transform(o), png, {}, scratch);
  const auto from_jpeg = run(*make_image_transform(o), lossless_ish, {}, scratch);
  double diff = 0;
  for (size_t i = 0; i < from_png.size(); ++i) {
    diff += std::abs(int(as<uint8_t>(from_png)[i]) - int(as<uint8_t>(from_jpeg)[i]));
  }
  EXPECT_LT(diff / from_png.size(), 1.0);
  o.dct_scaling = true;
  EXPECT_EQ(from_png, run(*make_image_transform(o), png, {}, scratch));
  o.train = true;  // and the train crop, whatever its size
  EXPECT_EQ(run(*make_image_transform(o), png, {4, 1, 7}, scratch).size(), from_png.size());
}

TEST_F(ImageTransformTest, ScratchSettlesAfterTheLargestImage) {
  auto t = make_image_transform({});
  std::vector<std::byte> out(t->output_spec().bytes());
  StageTimes times;
  // Warm up with the same image at many keys, then the buffers must not move any more.
  for (uint64_t i = 0; i < 64; ++i) t->apply({jpeg, 0}, {0, 0, i}, out.data(), scratch, times);
  const void* decoded = scratch.decoded.data();
  const void* f32 = scratch.f32.data();
  const void* work = scratch.work.data();
  for (uint64_t i = 64; i < 128; ++i) t->apply({jpeg, 0}, {0, 0, i}, out.data(), scratch, times);
  EXPECT_EQ(decoded, scratch.decoded.data());
  EXPECT_EQ(f32, scratch.f32.data());
  EXPECT_EQ(work, scratch.work.data());
}

TEST(ImageTransformOptions, BadOptionsAreNamedErrors) {
  auto bad = [](auto change, const char* name) {
    ImageTransformOptions o;
    change(o);
    try {
      make_image_transform(o);
      ADD_FAILURE() << "no error for " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  bad([](auto& o) { o.size = 0; }, "size");
  bad(
      [](auto& o) {
        o.scale_min = 0.9;
        o.scale_max = 0.1;
      },
      "scale");
  bad([](auto& o) { o.ratio_min = 0; }, "ratio");
  bad([](auto& o) { o.std[1] = 0; }, "std");
  bad([](auto& o) { o.dtype = DType::I64; }, "dtype");
  bad([](auto& o) { o.flip_p = 2; }, "flip_p");
  bad(
      [](auto& o) {
        o.train = false;
        o.resize_shorter = 100;
      },
      "resize_shorter");
}

}  // namespace
}  // namespace stoker
