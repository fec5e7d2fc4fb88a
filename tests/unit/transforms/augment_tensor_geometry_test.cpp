// Rotate, ShearX and ShearY on the tensor path against torchvision 0.14 itself: its
// _apply_op(tensor, op, magnitude, mode, None) of the 7 x 5 image `pattern()` (torch 1.13's
// CPU grid_sample) is in tests/support/data/tensor-affine-torchvision.txt. On the PIL path
// 13 to 28 of the 105 bilinear bytes are more than one level apart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "transforms/augment_tensor_geometry.hpp"

namespace stoker {
namespace {

constexpr int kW = 7, kH = 5;

std::vector<uint8_t> pattern() {
  std::vector<uint8_t> px;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const int r = (x * 37 + y * 59) % 256;
      px.insert(px.end(),
                {static_cast<uint8_t>(r), static_cast<uint8_t>((x * x * 13 + y * 7) % 256),
                 static_cast<uint8_t>(255 - r)});
    }
  }
  return px;
}

std::vector<uint8_t> bytes_of(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(TensorAffine, EqualsTorchvisionsTensorOperations) {
  std::ifstream in(std::string(STOKER_SOURCE_DIR) +
                   "/tests/support/data/tensor-affine-torchvision.txt");
  std::string op_name, mode, hex;
  double magnitude = 0;
  int cases = 0;
  while (in >> op_name >> magnitude >> mode >> hex) {
    const AugmentOp op = *value_named(kAugmentOpNames, op_name);
    const Interpolation interpolation = *value_named(kInterpolationNames, mode);
    std::vector<uint8_t> px = pattern(), spare(px.size());
    tensor_affine_op(op, magnitude, {px.data(), kW, kH}, spare.data(), interpolation);
    const std::vector<uint8_t> want = bytes_of(hex);
    ASSERT_EQ(px.size(), want.size());
    int worst = 0;
    for (size_t i = 0; i < px.size(); ++i) worst = std::max(worst, std::abs(px[i] - want[i]));
    // Nearest picks the same pixels; bilinear's float32 sums may round a half apart.
    EXPECT_LE(worst, interpolation == Interpolation::Nearest ? 0 : 1)
        << op_name << " " << magnitude << " " << mode;
    ++cases;
  }
  EXPECT_EQ(cases, 5);
}

}  // namespace
}  // namespace stoker
