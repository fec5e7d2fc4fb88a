// The augmentations that map every byte through a table of its channel (Identity,
// Brightness, Contrast, Posterize, Solarize, AutoContrast, Equalize, Invert) as those
// tables: the training pass (augment_pass.cpp) composes them with one another and with the
// normalisation into the slot instead of rewriting the image once for each.
// apply_augment_op applies the same tables, so both give the same bytes.
//
// Implemented in augment_ops.cpp.
#pragma once

#include <array>
#include <cstdint>

#include "stoker/transforms/augment_data.hpp"

namespace stoker {

using ByteTable = std::array<uint8_t, 256>;

// One table per channel (R, G, B).
struct ChannelTables {
  std::array<ByteTable, 3> channel;

  static ChannelTables identity();
  // These tables, then `next`.
  ChannelTables then(const ChannelTables& next) const;
  // Every byte of `image` through its channel's table.
  void apply(RgbPixels image) const;
};

// Whether `op` is such a table. If so, `out` is its table for the image that `image` is once
// `before` maps it (the histogram and mean operations read the image through `before`).
// The magnitude rules are apply_augment_op's (a stoker::Error for a bad one).
bool augment_op_tables(AugmentOp op, double magnitude, RgbPixels image, const ChannelTables& before,
                       ChannelTables& out);

}  // namespace stoker
