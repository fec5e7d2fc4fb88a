// The image pipeline as a Transform: header -> crop choice -> region decode (JPEG with DCT
// scaling when the crop is at least twice the output, or PNG) -> one fused
// resample/flip/normalise pass into the batch slot; with an automatic augmentation or
// random erasing asked for (augment_pass.hpp), the pass writes the crop's bytes, which are
// augmented and then normalised into the slot. Buffers come from the worker's Scratch;
// the decoders are per thread and reused, so the steady state of a JPEG dataset allocates
// nothing of ours (libpng creates its state per image).
#include <chrono>
#include <cstdio>
#include <string>

#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "transforms/augment_pass.hpp"
#include "transforms/image_decoder.hpp"
#include "transforms/resample.hpp"

namespace stoker {

namespace {

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Grows `v` to hold at least `n` elements of T and returns it as T*. Never shrinks, so a
// worker's buffers settle at the largest image seen.
template <class T, class V>
T* room(V& v, size_t n) {
  const size_t elems =
      (n * sizeof(T) + sizeof(typename V::value_type) - 1) / sizeof(typename V::value_type);
  if (v.size() < elems) v.resize(elems);
  return reinterpret_cast<T*>(v.data());
}

// The largest libjpeg downscale (1/8, 1/4, 1/2) that keeps the crop at least as large as
// the output on both axes, so the final resample still only shrinks.
int choose_denom(const CropBox& box, int size, bool enabled) {
  if (!enabled) return 1;
  for (int d : {8, 4, 2}) {
    if (box.w / d >= size && box.h / d >= size) return d;
  }
  return 1;
}

class ImageTransform final : public Transform {
 public:
  ImageTransform(const ImageTransformOptions& o, ResampleKernel kernel)
      : o_(o), norm_(Normalization::from(o)), kernel_(kernel), draw_(augment_draw(o)) {}

  SampleSpec output_spec() const override {
    const int64_t s = o_.size;
    return {o_.dtype, o_.layout == Layout::CHW ? std::vector<int64_t>{3, s, s}
                                               : std::vector<int64_t>{s, s, 3}};
  }

  void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
             StageTimes& times) const override {
    thread_local ImageDecoder decoder;
    const uint64_t t0 = now_ns();
    const int size = o_.size;
    BoxWeights w;
    DecodedRegion region;
    bool flip = false;
    try {
      const ImageHeader hdr = decoder.begin(in.bytes);
      const CropBox box = o_.train ? random_resized_crop(hdr.width, hdr.height, key, o_)
                                   : center_crop(hdr.width, hdr.height, o_);
      flip = random_flip(key, o_);
      const int d = choose_denom(box, size, o_.dct_scaling && decoder.scalable());
      const int sw = JpegDecoder::scaled(hdr.width, d), sh = JpegDecoder::scaled(hdr.height, d);
      ResampleBox scaled{box.x / d, box.y / d, box.w / d, box.h / d, sw, sh, size, o_.antialias};
      scaled.interpolation = o_.interpolation;
      scaled.crop_first = o_.train;
      scaled.nearest_x = {box.nearest_x.origin / d, box.nearest_x.step / d, box.nearest_x.skip};
      scaled.nearest_y = {box.nearest_y.origin / d, box.nearest_y.step / d, box.nearest_y.skip};
      w = box_taps(scaled);
      int* starts = room<int>(scratch.work, w.start_count());
      AxisWeights widest = w.h;  // the filtered row is at most the scaled image's width
      widest.hi = sw;
      float* floats = room<float>(
          scratch.f32, w.weight_count() + resample_work_floats(widest, w.v, size, kernel_));
      fill_box_weights(scaled, starts, floats, w);
      region =
          decoder.decode(d, {w.h.lo, w.v.lo, w.h.hi - w.h.lo, w.v.hi - w.v.lo}, scratch.decoded);
    } catch (const DecodeFailure& e) {
      throw SampleError{key.index, {}, std::string("cannot decode image: ") + e.what()};
    }
    const uint64_t t1 = now_ns();
    float* work = scratch.f32.data() + w.weight_count();
    const ResampleTarget slot{out, size, size, o_.dtype, o_.layout};
    if (augments(o_)) {
      const RgbPixels image{room<uint8_t>(scratch.augment, 2 * size_t(size) * size * 3), size,
                            size};
      resize(region, w, flip, Normalization{}, {image.data, size, size, DType::U8, Layout::HWC},
             work);
      const ChannelTables tables =
          o_.train && draw_
              ? auto_augment(*draw_, key, image, image.data + image.bytes(), o_.interpolation)
              : ChannelTables::identity();
      write_slot(image, tables, norm_, slot);
      random_erase(o_, key, slot);
    } else {
      resize(region, w, flip, norm_, slot, work);
    }
    times.decode_ns += t1 - t0;
    times.transform_ns += now_ns() - t1;
  }

  std::string describe() const override {
    char buf[440];
    if (o_.train) {
      char augment[96] = "";
      if (o_.auto_augment_policy) {
        std::snprintf(augment, sizeof augment, " + auto_augment %s",
                      to_string(*o_.auto_augment_policy));
      }
      char erase[48] = "";
      if (o_.random_erase_prob > 0) {
        std::snprintf(erase, sizeof erase, " + RandomErasing(p=%.2g)", o_.random_erase_prob);
      }
      std::snprintf(buf, sizeof buf,
                    "RandomResizedCrop(%d, scale=(%.2g,%.2g), ratio=(%.3g,%.3g)) + "
                    "HorizontalFlip(p=%.2g)%s + Normalize%s -> %s %s, %s%s, resample %s",
                    o_.size, o_.scale_min, o_.scale_max, o_.ratio_min, o_.ratio_max, o_.flip_p,
                    augment, erase, to_string(o_.dtype), to_string(o_.layout),
                    to_string(o_.interpolation), antialiased(), to_string(kernel_));
    } else {
      std::snprintf(buf, sizeof buf,
                    "Resize(%d) + CenterCrop(%d) + Normalize -> %s %s, %s%s, resample %s",
                    o_.resize_shorter, o_.size, to_string(o_.dtype), to_string(o_.layout),
                    to_string(o_.interpolation), antialiased(), to_string(kernel_));
    }
    return buf;
  }

 private:
  // Bicubic overshoots: PIL's two passes with a clamp between them (resample_two_pass).
  void resize(const DecodedRegion& region, const BoxWeights& w, bool flip,
              const Normalization& norm, const ResampleTarget& target, float* work) const {
    if (o_.interpolation == Interpolation::Bicubic) {
      return resample_two_pass(region, w.h, w.v, flip, norm, target, kernel_);
    }
    resample(region, w.h, w.v, flip, norm, target, work, kernel_);
  }

  const char* antialiased() const {  // nearest never filters
    return o_.antialias && o_.interpolation != Interpolation::Nearest ? " antialias" : "";
  }

  ImageTransformOptions o_;
  Normalization norm_;
  ResampleKernel kernel_;
  std::optional<AugmentDraw> draw_;  // the policy's tables for o_.size, made once
};

void check(bool ok, const char* option, const std::string& what, const char* todo) {
  if (!ok) throw Error(std::string("image transform option ") + option, what, todo);
}

}  // namespace

std::unique_ptr<Transform> make_image_transform(const ImageTransformOptions& o) {
  check(o.size > 0 && o.size <= 16384, "size", "must be in 1..16384, got " + std::to_string(o.size),
        "use the model's input size, e.g. 224");
  check(o.train || o.resize_shorter >= o.size, "resize_shorter",
        "must be >= size (" + std::to_string(o.size) + "), got " + std::to_string(o.resize_shorter),
        "e.g. 256 for size 224");
  check(o.scale_min > 0 && o.scale_min <= o.scale_max, "scale",
        "needs 0 < min <= max, got (" + std::to_string(o.scale_min) + ", " +
            std::to_string(o.scale_max) + ")",
        "torchvision's default is (0.08, 1.0)");
  check(o.ratio_min > 0 && o.ratio_min <= o.ratio_max, "ratio",
        "needs 0 < min <= max, got (" + std::to_string(o.ratio_min) + ", " +
            std::to_string(o.ratio_max) + ")",
        "torchvision's default is (3/4, 4/3)");
  check(o.flip_p >= 0 && o.flip_p <= 1, "flip_p", "must be in [0, 1]", "e.g. 0.5");
  check(o.ra_magnitude >= 0 && o.ra_magnitude <= 30, "ra_magnitude",
        "must be a bin 0..30, got " + std::to_string(o.ra_magnitude), "the reference's is 9");
  check(o.random_erase_prob >= 0 && o.random_erase_prob <= 1, "random_erase_prob",
        "must be in [0, 1]", "the reference recipe's is 0.1");
  for (float s : o.std) check(s != 0.0f, "std", "has a zero entry", "use the dataset's std");
  check(o.dtype == DType::F32 || o.dtype == DType::F16 || o.dtype == DType::U8, "dtype",
        std::string("must be float32, float16 or uint8, got ") + to_string(o.dtype), "");
  return std::make_unique<ImageTransform>(o, resample_kernel_from(process_env()("STOKER_SIMD")));
}

}  // namespace stoker
