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
//
// The pipeline's parts have headers of their own, which the room's files include without
// this one (it includes them): the options (image_options.hpp), the crop (crop.hpp) and the
// whole-image decode (full_decode.hpp). This header brings them to its users.
#pragma once

#include <memory>

#include "stoker/transforms/crop.hpp"
#include "stoker/transforms/full_decode.hpp"
#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// Throws stoker::Error naming the bad option (size <= 0, scale or ratio out of order,
// std == 0, dtype other than U8/F16/F32).
std::unique_ptr<Transform> make_image_transform(const ImageTransformOptions& opts);

}  // namespace stoker
