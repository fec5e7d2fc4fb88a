// Rotate, ShearX and ShearY as torchvision 0.14 runs them on a uint8 tensor, not on a PIL
// image: AugMix turns its PIL input into a tensor before its chains, so its operations are
// the tensor ones (augment_tensor_geometry.cpp). The other operations give PIL's bytes or
// within one level of them (the translations are whole-pixel shifts on both), but these
// three sample with grid_sample, whose bilinear filter blends the border with zeros: 0.6 to
// 2.7 % of a photo's pixels are more than one level from PIL's transform, up to 128 levels.
#pragma once

#include <cstdint>

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"

namespace stoker {

// F.rotate(tensor, magnitude) or F.affine(tensor, shear=degrees(atan(magnitude)), center=[0,
// 0]) with fill=None (AugMix's): torchvision's inverse matrix in float32 over a grid centred on
// the image, sampled as grid_sample(mode, padding_mode="zeros", align_corners=False) does, in
// float32, and rounded half to even. `op` is Rotate, ShearX or ShearY; `interpolation`
// bilinear or nearest (torchvision refuses bicubic for tensors); `spare` holds image.bytes().
void tensor_affine_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
                      Interpolation interpolation);

}  // namespace stoker
