// Separable resampling of a box of a decoded RGB region to the output size, fused with the
// horizontal flip and the per-channel normalisation, writing the output sample in place
// (the batch slot). Weights follow PIL's resampling (which torchvision's antialias=True
// reproduces): bilinear (triangle, support 1) and bicubic (a = -0.5, support 2) filters
// widen by the downscale factor; nearest is one tap of weight 1 at PIL's pixel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/transforms/crop.hpp"
#include "transforms/decoded_region.hpp"
#include "transforms/resample_args.hpp"

namespace stoker {

// The box [x, x + w) x [y, y + h) of an in_w x in_h image, resampled to out x out pixels.
struct ResampleBox {
  double x = 0, y = 0, w = 0, h = 0;
  int in_w = 0, in_h = 0, out = 0;
  bool antialias = true;
  Interpolation interpolation = Interpolation::Bilinear;
  NearestAxis nearest_x = {}, nearest_y = {};  // nearest only: PIL's positions (crop.hpp)
  // The box is cut out before it is resized, as torchvision's RandomResizedCrop does
  // (F.resized_crop): no pixel outside it weighs in. Otherwise the filter reaches past the
  // box's edges into the image, as a resize of the whole image then cropped (evaluation).
  bool crop_first = false;
};

// Both axes' weights of one box: h (columns) and v (rows). One owner for the set-up that the
// transform, its tests and the benchmarks share: the taps first (they size the memory), then
// the weights, h's before v's in one array of floats.
struct BoxWeights {
  AxisWeights h, v;
  int out = 0;
  size_t start_count() const { return 2 * static_cast<size_t>(out); }
  size_t weight_count() const { return static_cast<size_t>(out) * (h.taps + v.taps); }
};
// The taps of both axes, no weights yet: what start_count() and weight_count() need.
BoxWeights box_taps(const ResampleBox& box);
// Fills `w` (from box_taps) with starts[start_count()] and weights[weight_count()].
void fill_box_weights(const ResampleBox& box, int* starts, float* weights, BoxWeights& w);
// Both steps into vectors sized here (tests and benchmarks; the transform uses its scratch,
// which allocates nothing per sample).
BoxWeights box_weights(const ResampleBox& box, std::vector<int>& starts,
                       std::vector<float>& weights);

// The code that runs the pass: a portable kernel (any compiler and CPU) and, on x86-64, an
// AVX2 one (8 floats per operation, F16C for float16) chosen at run time. Both do the same
// float operations in the same order (no fused multiply-add: resample*.cpp are built with
// -ffp-contract=off), so their outputs are the same bit for bit.
enum class ResampleKernel { Portable, Avx2 };
// The fastest kernel this build and CPU can run.
ResampleKernel best_resample_kernel();
bool resample_kernel_available(ResampleKernel kernel);
const char* to_string(ResampleKernel kernel);
// The kernel STOKER_SIMD asks for: unset or "auto" the best, "portable", or "avx2" (an
// Error where this CPU or build has none, or for any other value).
ResampleKernel resample_kernel_from(const std::optional<std::string>& simd);

// The floats of scratch `work` the pass needs (the filtered row; for the AVX2 kernel also
// the horizontal weights per output pair and a ring of input rows as floats).
size_t resample_work_floats(const AxisWeights& h, const AxisWeights& v, int width,
                            ResampleKernel kernel = best_resample_kernel());

// The region must cover [h.lo, h.hi) x [v.lo, v.hi).
void resample(const DecodedRegion& region, const AxisWeights& h, const AxisWeights& v, bool flip,
              const Normalization& norm, const ResampleTarget& target, float* work,
              ResampleKernel kernel = best_resample_kernel());

// The same pass in PIL's order, for a filter with negative lobes (bicubic): the horizontal
// filter first into bytes, rounded and clamped to 0..255 as PIL's 8-bit intermediate image,
// then the vertical one. The fused pass clamps only at the end, so an edge's overshoot that
// PIL clamps in between reaches the other axis's filter: up to 30 levels apart at saturated
// edges of graphics. Its buffers are the calling thread's, reused (resample_two_pass.cpp).
void resample_two_pass(const DecodedRegion& region, const AxisWeights& h, const AxisWeights& v,
                       bool flip, const Normalization& norm, const ResampleTarget& target,
                       ResampleKernel kernel = best_resample_kernel());

}  // namespace stoker
