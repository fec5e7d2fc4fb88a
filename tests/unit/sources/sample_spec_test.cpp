// What one sample is: the element types' names and sizes.
#include "stoker/sources/sample_spec.hpp"

#include <gtest/gtest.h>

#include "enum_names_check.hpp"

namespace stoker {
namespace {

TEST(DType, NumpyNamesReadBothWays) {
  expect_names_round_trip(
      kDTypeNames, [](DType t) { return to_string(t); }, parse_dtype);
  EXPECT_EQ(names_of(kDTypeNames), "uint8, uint16, uint32, int64, float16 or float32");
}

TEST(DType, SizesAndSampleBytes) {
  EXPECT_EQ(dtype_size(DType::U8), 1u);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::U32), 4u);
  EXPECT_EQ(dtype_size(DType::I64), 8u);
  EXPECT_EQ((SampleSpec{DType::F32, {3, 4, 5}}.bytes()), 240u);
}

}  // namespace
}  // namespace stoker
