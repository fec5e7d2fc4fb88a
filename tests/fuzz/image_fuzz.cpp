// JPEG, PNG and WebP bytes through the decoders: the whole-image decode (decode_rgb, what the
// Python API's decode and `stoker bench --limit` use) and the loader's own pipeline
// (region decode, crop, resize) in eval and train modes. The decoder is chosen by the
// magic bytes, as for a real file.
#include "fuzz_support.hpp"
#include "stoker/transforms/image_transforms.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  const auto bytes = fuzz::as_bytes(data, size);
  fuzz::expect_clean([&] {
    const RgbImage image = decode_rgb(bytes);
    if (image.pixels.size() != size_t(image.width) * size_t(image.height) * 3)
      fuzz::finding("decode_rgb's pixels do not fill width x height", "");
  });
  static const auto transforms = [] {
    std::vector<std::unique_ptr<Transform>> made;
    for (bool train : {false, true}) {
      ImageTransformOptions opts;
      opts.train = train;
      opts.size = 16;
      opts.resize_shorter = 18;
      opts.dtype = train ? DType::F16 : DType::U8;
      made.push_back(make_image_transform(opts));
    }
    return made;
  }();
  for (const auto& transform : transforms) {
    std::vector<std::byte> out(transform->output_spec().bytes());
    Scratch scratch;
    StageTimes times;
    fuzz::expect_clean([&] {
      transform->apply({bytes, 0}, {1, 2, size}, out.data(), scratch, times);
    });
  }
  return 0;
}
