// The crop an image pipeline takes of each image, in source pixels: torchvision's
// RandomResizedCrop and horizontal flip in training, Resize + CenterCrop in evaluation,
// drawn from the sample's key only, so a resumed or re-run epoch crops alike.
#pragma once

#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// Where PIL's nearest resize samples on one axis: output j of the whole resize takes source
// pixel origin + (int)(step / 2 + step + ... + step), its j steps added one at a time as PIL
// adds them (a product rounds differently near whole numbers); the box's first output is
// j = skip. step 0: the box is the resize's whole input (RandomResizedCrop's crop), so
// origin is its start, step its size / out and skip 0.
struct NearestAxis {
  double origin = 0, step = 0;
  int skip = 0;
  bool operator==(const NearestAxis&) const = default;
};

// A crop in source pixels (fractional for eval boxes).
struct CropBox {
  double x = 0, y = 0, w = 0, h = 0;
  // Set by center_crop (Resize's step, CenterCrop's offset); RandomResizedCrop's are 0.
  NearestAxis nearest_x = {}, nearest_y = {};
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
