// The training pass's augmentations after the crop and flip, in the reference preset's
// order: the resized crop as an RGB image of bytes, augmented by the policy's draw for the
// sample (augment_draw.hpp), normalised into the batch slot, then RandomErasing on the slot.
// The fused pass (resample.hpp) writes the slot directly when neither is asked for.
#pragma once

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"
#include "transforms/resample_args.hpp"

namespace stoker {

// Whether a training pass with `o` goes through the byte image (a policy or erasing set).
bool augments(const ImageTransformOptions& o);

// `image` (the resized, flipped crop) augmented in place by o's policy for the sample `key`;
// `spare` holds image.bytes() bytes.
void auto_augment(const ImageTransformOptions& o, const SampleKey& key, RgbPixels image,
                  uint8_t* spare);

// `image` into the slot `t` (its dtype and layout), normalised by `norm` as ToTensor and
// Normalize do (uint8 slots take the bytes).
void write_slot(RgbPixels image, const Normalization& norm, const ResampleTarget& t);

// torchvision's RandomErasing(p=o.random_erase_prob, scale=(0.02, 0.33), ratio=(0.3, 3.3),
// value=0) on the slot, drawn from the sample's own stream.
void random_erase(const ImageTransformOptions& o, const SampleKey& key, const ResampleTarget& t);

}  // namespace stoker
