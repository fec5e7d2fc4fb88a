// The training pass's augmentations after the crop and flip, in the reference preset's
// order: the resized crop as an RGB image of bytes, augmented by the policy's draw for the
// sample (augment_draw.hpp), normalised into the batch slot, then RandomErasing on the slot.
// The fused pass (resample.hpp) writes the slot directly when neither is asked for.
#pragma once

#include <optional>

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/image_options.hpp"
#include "transforms/augment_draw.hpp"
#include "transforms/augment_tables.hpp"
#include "transforms/resample_args.hpp"

namespace stoker {

// Whether a training pass with `o` goes through the byte image (a policy or erasing set).
bool augments(const ImageTransformOptions& o);

// The draw tables of o's policy for its output size (RandAugment at o.ra_magnitude, 2
// operations of 31 bins, as the reference preset makes it); none without a policy. AugMix
// with bicubic is a stoker::Error naming both options, as torchvision refuses it.
std::optional<AugmentDraw> augment_draw(const ImageTransformOptions& o);

// `image` (the resized, flipped crop) augmented by the policy's draw for the sample `key`,
// its geometric operations sampling with `interpolation`: in place, but for the last
// operations that are tables per channel, which are returned for write_slot to apply
// (augment_tables.hpp); `spare` holds image.bytes() bytes. AugMix mixes its chains into the
// bytes (augmix.hpp) and returns identity tables.
ChannelTables auto_augment(const AugmentDraw& draw, const SampleKey& key, RgbPixels image,
                           uint8_t* spare, Interpolation interpolation);

// `image` through `tables` into the slot `t` (its dtype and layout), normalised by `norm` as
// ToTensor and Normalize do (uint8 slots take the bytes).
void write_slot(RgbPixels image, const ChannelTables& tables, const Normalization& norm,
                const ResampleTarget& t);

// torchvision's RandomErasing(p=o.random_erase_prob, scale=(0.02, 0.33), ratio=(0.3, 3.3),
// value=0) on the slot, drawn from the sample's own stream.
void random_erase(const ImageTransformOptions& o, const SampleKey& key, const ResampleTarget& t);

}  // namespace stoker
