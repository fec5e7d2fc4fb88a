// The crop an image pipeline takes of each image, in source pixels: torchvision's
// RandomResizedCrop and horizontal flip in training, Resize + CenterCrop in evaluation,
// drawn from the sample's key only, so a resumed or re-run epoch crops alike.
#pragma once

#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

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

}  // namespace stoker
