// Image pipelines: JPEG or PNG decode of only the needed region, then one fused pass of
// crop -> resize -> flip -> normalize written straight into the batch slot.
//
// Decoding: the file's first bytes choose the decoder (a PNG named .JPEG is a PNG). Every
// JPEG kind (baseline, progressive, grey, CMYK, YCCK, restart markers, any subsampling) and
// every PNG kind (1 to 16 bits, grey, grey+alpha, palette, RGB, RGBA, interlaced) comes out
// as the RGB pixels of PIL's Image.open(f).convert('RGB'), the pixels torchvision's
// ImageFolder sees: exactly for PNG and within IDCT rounding for JPEG.
//
// train: RandomResizedCrop(size, scale, ratio) + RandomHorizontalFlip(flip_p) + Normalize,
//        with torchvision's crop sampling (10 tries, then a centre crop within `ratio`).
// eval:  Resize(resize_shorter) + CenterCrop(size) + Normalize, done as one resampling of the
//        equivalent box of the source image.
// Resampling is bilinear (triangle filter). With antialias the filter widens by the
// downscale factor, as PIL and torchvision's antialias=True do; without it, plain
// 2-tap bilinear (torchvision's antialias=False on tensors).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "stoker/common/enum_names.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

enum class Layout { CHW, HWC };
inline constexpr EnumName<Layout> kLayoutNames[] = {{Layout::CHW, "CHW"}, {Layout::HWC, "HWC"}};
inline const char* to_string(Layout l) {
  return name_of(kLayoutNames, l);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<Layout> parse_layout(std::string_view s) {
  return value_named(kLayoutNames, s);
}

struct ImageTransformOptions {
  bool train = true;
  int size = 224;                            // output height and width
  int resize_shorter = 256;                  // eval only: the shorter side before the centre crop
  double scale_min = 0.08, scale_max = 1.0;  // RandomResizedCrop scale (area fraction)
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // RandomResizedCrop aspect ratio
  double flip_p = 0.5;  // train only: probability of a horizontal flip
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // on the 0..1 scale (ToTensor)
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  DType dtype = DType::F32;  // F32 and F16 are normalized; U8 is the resized pixel, 0..255
  Layout layout = Layout::CHW;
  bool antialias = true;
  bool dct_scaling = true;  // let libjpeg downscale by 2, 4 or 8 when the crop is that large
};

// A crop in source pixels (fractional for eval boxes).
struct CropBox {
  double x = 0, y = 0, w = 0, h = 0;
  bool operator==(const CropBox&) const = default;
};

// torchvision's RandomResizedCrop.get_params, drawing from SampleKey only.
CropBox random_resized_crop(int width, int height, const SampleKey& key,
                            const ImageTransformOptions& opts);
// Resize(resize_shorter) + CenterCrop(size), as a box of the source image.
CropBox center_crop(int width, int height, const ImageTransformOptions& opts);
// Whether sample `key` is flipped (train only).
bool random_flip(const SampleKey& key, const ImageTransformOptions& opts);

// One image decoded whole, as the pipeline decodes it (see above).
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // height rows of width x 3 bytes (R, G, B)
};
// Throws stoker::Error (where "image") saying why `bytes` cannot be decoded: empty, not a
// JPEG or PNG, truncated or corrupt.
RgbImage decode_rgb(std::span<const std::byte> bytes);

// Throws stoker::Error naming the bad option (size <= 0, scale or ratio out of order,
// std == 0, dtype other than U8/F16/F32).
std::unique_ptr<Transform> make_image_transform(const ImageTransformOptions& opts);

}  // namespace stoker
