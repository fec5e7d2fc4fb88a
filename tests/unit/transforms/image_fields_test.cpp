// ImageTransformOptions' table: each row sets and reads its own option, with the pipeline's
// defaults.
#include "stoker/transforms/image_fields.hpp"

#include <gtest/gtest.h>

#include <set>

#include "option_rows.hpp"

using namespace stoker;

TEST(ImageFields, EveryRowSetsAndReadsItsOwnOption) {
  std::set<std::string> names;
  for (const OptionField<ImageTransformOptions>& row : image_fields()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    ImageTransformOptions o;
    const OptionValue v = test::another_value(row);
    row.set(o, v);
    EXPECT_EQ(row.get(o), v) << row.name;
  }
  EXPECT_EQ(names.size(), 19u);
}

TEST(ImageFields, TheDefaultsAreThePipelines) {
  const ImageTransformOptions o;
  EXPECT_EQ(std::get<uint64_t>(find_option(image_fields(), "size")->get(o)), 224u);
  EXPECT_EQ(std::get<std::string>(find_option(image_fields(), "dtype")->get(o)), "float32");
  EXPECT_EQ(std::get<std::vector<double>>(find_option(image_fields(), "scale")->get(o)),
            (std::vector<double>{0.08, 1.0}));
  // The reference preset's: no automatic augmentation, no erasing, RandAugment's bin 9.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      find_option(image_fields(), "auto_augment_policy")->get(o)));
  EXPECT_EQ(std::get<double>(find_option(image_fields(), "random_erase_prob")->get(o)), 0.0);
  EXPECT_EQ(std::get<uint64_t>(find_option(image_fields(), "ra_magnitude")->get(o)), 9u);
  // The reference script's: no mixing, and the dataset's class count.
  EXPECT_EQ(std::get<double>(find_option(image_fields(), "mixup_alpha")->get(o)), 0.0);
  EXPECT_EQ(std::get<double>(find_option(image_fields(), "cutmix_alpha")->get(o)), 0.0);
  EXPECT_TRUE(
      std::holds_alternative<std::monostate>(find_option(image_fields(), "num_classes")->get(o)));
  // The preset's --interpolation default.
  EXPECT_EQ(std::get<std::string>(find_option(image_fields(), "interpolation")->get(o)),
            "bilinear");
}
