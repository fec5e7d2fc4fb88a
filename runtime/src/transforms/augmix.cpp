// AugMix (augmix.hpp): the draw from the sample's own stream of the keyed generator, and the
// mix in torch's float32 order. Built with -ffp-contract=off: torch rounds each product of
// the mix before the sum (mul, then add_), and so must this.
#include "stoker/transforms/augmix.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/transforms/augment_ops.hpp"
#include "transforms/augment_tensor_color.hpp"
#include "transforms/augment_tensor_geometry.hpp"
#include "transforms/counter_rng.hpp"

namespace stoker {

namespace {

// The generator's stream for AugMix (crop.cpp has 1 and 2, augment_draw.cpp 3,
// augment_pass.cpp 4, batch_mix.cpp 0x6d6978).
constexpr uint64_t kAugMixStream = 5;

// An exponential draw: a Dirichlet(1, ..., 1) is n of them, normalised.
double exponential(CounterRng& rng) {
  return -std::log1p(-rng.uniform());
}

}  // namespace

AugMixDraw draw_augmix(std::span<const AugmentSpaceOp> space, const SampleKey& key) {
  CounterRng rng(key, kAugMixStream);
  AugMixDraw d{};
  const double u = rng.uniform();
  d.m = {static_cast<float>(u), static_cast<float>(1.0 - u)};
  std::array<double, kAugMixWidth> e{};
  double sum = 0;
  for (double& x : e) sum += x = exponential(rng);
  for (int i = 0; i < kAugMixWidth; ++i) d.weights[i] = static_cast<float>(e[i] / sum);
  for (int i = 0; i < kAugMixWidth; ++i) {
    d.depth[i] = 1 + static_cast<int>(rng.below(kAugMixMaxDepth));
    for (int j = 0; j < d.depth[i]; ++j) {
      AugMixStep& s = d.chains[i][j];
      s.op_index = static_cast<int>(rng.below(space.size()));
      const AugmentSpaceOp& op = space[s.op_index];
      s.op = op.op;
      s.bin = op.magnitudes.empty() ? 0 : static_cast<int>(rng.below(kAugMixSeverity));
      s.negate = op.is_signed && rng.below(2) == 1;
      s.magnitude = op.magnitudes.empty() ? 0.0 : op.magnitudes[s.bin];
      if (s.negate) s.magnitude = -s.magnitude;
    }
  }
  return d;
}

void check_augmix_interpolation(Interpolation interpolation) {
  if (interpolation != Interpolation::Bicubic) return;
  throw Error("auto_augment_policy=augmix with interpolation=bicubic",
              "torchvision's AugMix works on a uint8 tensor, and its Rotate and shears refuse "
              "bicubic for tensors",
              "give interpolation=bilinear (the reference's default) or nearest with augmix");
}

void augmix(const AugMixDraw& draw, RgbPixels image, Interpolation interpolation) {
  check_augmix_interpolation(interpolation);
  const size_t n = image.bytes();
  thread_local std::vector<uint8_t> chain, spare;  // grown once to the largest image
  thread_local std::vector<float> mix;
  if (chain.size() < n) {
    chain.resize(n);
    spare.resize(n);
    mix.resize(n);
  }
  const float m0 = draw.m[0];
  for (size_t p = 0; p < n; ++p) mix[p] = m0 * static_cast<float>(image.data[p]);
  const RgbPixels aug{chain.data(), image.width, image.height};
  for (int i = 0; i < kAugMixWidth; ++i) {
    std::memcpy(chain.data(), image.data, n);
    for (int j = 0; j < draw.depth[i]; ++j) {
      const AugMixStep& s = draw.chains[i][j];
      if (s.op == AugmentOp::Rotate || s.op == AugmentOp::ShearX || s.op == AugmentOp::ShearY) {
        tensor_affine_op(s.op, s.magnitude, aug, spare.data(), interpolation);
      } else if (is_tensor_color_op(s.op)) {
        tensor_color_op(s.op, s.magnitude, aug, spare.data());
      } else {
        apply_augment_op(s.op, s.magnitude, aug, spare.data(), interpolation);
      }
    }
    const float w = draw.weights[i] * draw.m[1];  // combined_weights[:, i]
    for (size_t p = 0; p < n; ++p) mix[p] += w * static_cast<float>(chain[p]);
  }
  for (size_t p = 0; p < n; ++p) image.data[p] = static_cast<uint8_t>(mix[p]);
}

}  // namespace stoker
