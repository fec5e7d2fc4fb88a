// The table operations as tables (augment_tables.hpp, augment_ops.cpp): each table entry by
// its rule, and a table made for an image as an earlier table maps it equals the operation on
// the mapped image, which is what lets the training pass compose them instead of applying each.
#include <gtest/gtest.h>

#include <vector>

#include "stoker/transforms/augment_ops.hpp"
#include "transforms/augment_tables.hpp"

namespace stoker {
namespace {

// 16 x 12 pixels of varied bytes (a histogram with gaps and repeats).
std::vector<uint8_t> varied() {
  std::vector<uint8_t> v(16 * 12 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 37 + i / 7) % 200 + 20);
  return v;
}

ChannelTables tables_of(AugmentOp op, double magnitude, std::vector<uint8_t>& image,
                        const ChannelTables& before = ChannelTables::identity()) {
  ChannelTables t;
  EXPECT_TRUE(augment_op_tables(op, magnitude, {image.data(), 16, 12}, before, t));
  return t;
}

// GCC 12's -O2 vectorised the Solarize table's loop and then copied the table, by brace
// initialisation, from bytes it had not written yet: every table must hold its rule's bytes.
TEST(FaultsAugmentTables, EveryEntryFollowsItsOperationsRule) {
  std::vector<uint8_t> image = varied();
  for (double m : {-5.0, 0.0, 1.0, 100.0, 128.0, 255.0, 256.0}) {
    const ChannelTables t = tables_of(AugmentOp::Solarize, m, image);
    for (int c = 0; c < 3; ++c) {
      for (int v = 0; v < 256; ++v) ASSERT_EQ(t.channel[c][v], v < m ? v : 255 - v) << m << v;
    }
  }
  for (int bits = 0; bits <= 8; ++bits) {
    const ChannelTables t = tables_of(AugmentOp::Posterize, bits, image);
    const int keep = ~((1 << (8 - bits)) - 1);
    for (int c = 0; c < 3; ++c) {
      for (int v = 0; v < 256; ++v) ASSERT_EQ(t.channel[c][v], v & keep) << bits << " " << v;
    }
  }
  const ChannelTables inverted = tables_of(AugmentOp::Invert, 0.0, image);
  const ChannelTables identity = tables_of(AugmentOp::Identity, 0.0, image);
  for (int c = 0; c < 3; ++c) {
    for (int v = 0; v < 256; ++v) {
      ASSERT_EQ(inverted.channel[c][v], 255 - v);
      ASSERT_EQ(identity.channel[c][v], v);
    }
  }
}

TEST(AugmentTables, OnlyTheOperationsThatMapEachByteAreTables) {
  std::vector<uint8_t> image = varied();
  ChannelTables t;
  for (AugmentOp op : {AugmentOp::ShearX, AugmentOp::Rotate, AugmentOp::Color, AugmentOp::Sharpness,
                       AugmentOp::HorizontalFlip}) {
    EXPECT_FALSE(augment_op_tables(op, 0.3, {image.data(), 16, 12}, ChannelTables::identity(), t))
        << to_string(op);
  }
}

TEST(AugmentTables, ATableMadeThroughAnEarlierOneEqualsTheTwoAppliedInTurn) {
  const AugmentOp reading[] = {AugmentOp::Contrast, AugmentOp::AutoContrast, AugmentOp::Equalize,
                               AugmentOp::Brightness, AugmentOp::Solarize};
  const std::pair<AugmentOp, double> firsts[] = {{AugmentOp::Posterize, 3.0},
                                                 {AugmentOp::Brightness, -0.6},
                                                 {AugmentOp::Contrast, 0.8},
                                                 {AugmentOp::Equalize, 0.0}};
  for (const auto& [first, m1] : firsts) {
    for (AugmentOp second : reading) {
      std::vector<uint8_t> want = varied(), spare(want.size());
      apply_augment_op(first, m1, {want.data(), 16, 12}, spare.data());
      apply_augment_op(second, 0.5, {want.data(), 16, 12}, spare.data());

      std::vector<uint8_t> got = varied();
      const ChannelTables before = tables_of(first, m1, got);
      before.then(tables_of(second, 0.5, got, before)).apply({got.data(), 16, 12});
      EXPECT_EQ(got, want) << to_string(first) << " then " << to_string(second);
    }
  }
}

}  // namespace
}  // namespace stoker
