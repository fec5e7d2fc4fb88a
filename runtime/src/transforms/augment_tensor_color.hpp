// Brightness, Color, Contrast, Sharpness and AutoContrast as torchvision 0.14 runs them on a
// uint8 tensor, not on a PIL image (AugMix's chains work on the tensor, augmix.hpp): torch's
// float32 blend and stretch truncated to bytes by .to(uint8), where PIL rounds. A one-level
// difference is small alone, but later steps of a chain (Solarize's threshold, AutoContrast's
// stretch) can turn it into many levels.
#pragma once

#include <cstdint>

#include "stoker/transforms/augment_data.hpp"

namespace stoker {

// Whether `op` is one of the five (the others are the PIL operations' bytes on tensors too,
// or augment_tensor_geometry.hpp's).
bool is_tensor_color_op(AugmentOp op);

// _apply_op(tensor, op, magnitude) for one of the five: F_t.adjust_brightness, _saturation,
// _contrast, _sharpness with factor 1 + magnitude, or F_t.autocontrast. `spare` holds
// image.bytes() bytes.
void tensor_color_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare);

}  // namespace stoker
