// torchvision 0.14's AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0,
// all_ops=True), as the reference preset's --auto-augment augmix makes it: the draw for one
// sample from stoker's keyed generator, and the mix on an RGB image of bytes with the
// operations torchvision runs on its uint8 tensor. Sources: augmix.cpp.
#pragma once

#include <array>
#include <span>

#include "stoker/transforms/augment_data.hpp"
#include "stoker/transforms/augment_policy.hpp"
#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// AugMix's knobs as the reference preset leaves them.
inline constexpr int kAugMixSeverity = 3;  // magnitude bins 0..2 of the 10
inline constexpr int kAugMixWidth = 3;     // chains
inline constexpr int kAugMixMaxDepth = 3;  // chain_depth=-1: 1..3 operations a chain

// One operation of a chain: its index in augmentation_space(AugMix, ...), its bin (0 for the
// operations without magnitudes), whether it is negated, and the magnitude that gives.
struct AugMixStep {
  int op_index;
  int bin;
  bool negate;
  AugmentOp op;
  double magnitude;
};

// One sample's draw: the Beta(1, 1) pair (the original's weight, the chains' share), the
// Dirichlet([1, 1, 1]) weights of the chains, and each chain's depth and operations.
struct AugMixDraw {
  std::array<float, 2> m;
  std::array<float, kAugMixWidth> weights;
  std::array<int, kAugMixWidth> depth;
  std::array<std::array<AugMixStep, kAugMixMaxDepth>, kAugMixWidth> chains;
};

// The draw for the sample `key` over `space` (AugMix's 10-bin space for the image's size), as
// AugMix.forward makes it: m from Beta(1, 1), the weights as three normalised exponential
// draws, then per chain its depth uniform in 1..3 and per operation its index uniform in the
// space, its bin uniform in 0..severity-1 where it has magnitudes, its sign on a coin where
// it is signed.
AugMixDraw draw_augmix(std::span<const AugmentSpaceOp> space, const SampleKey& key);

// `image` replaced by torchvision's mix of it with its chains: in float32, m[0] * image plus
// each chain's (weights[i] * m[1]) * chain(image), added in chain order, then truncated to
// bytes as .to(uint8) does. Rotate and the shears are the tensor ones (grid_sample with zeros
// past the border), so are Brightness, Color, Contrast, Sharpness and AutoContrast (float32
// truncated where PIL rounds); the others apply_augment_op's (the same bytes), with fill 0. The
// buffers are the thread's own, grown once to the largest image. `interpolation` bilinear or
// nearest (torchvision's AugMix refuses bicubic for the tensors it works on: stoker::Error).
void augmix(const AugMixDraw& draw, RgbPixels image, Interpolation interpolation);

// Throws stoker::Error naming auto_augment_policy and interpolation when they are AugMix and
// bicubic, which torchvision's AugMix refuses.
void check_augmix_interpolation(Interpolation interpolation);

}  // namespace stoker
