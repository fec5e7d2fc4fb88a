// What one resampling pass reads and writes besides the decoded region: each axis's
// weights, the normalisation and the output. Shared by the pass (resample.hpp) and its
// kernels (resample_kernel.hpp), which resample.cpp includes: the kernels include this,
// not the pass's header. Normalization::from is resample.cpp's.
#pragma once

#include <array>

#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// Weights of one axis: output i reads inputs start[i] .. start[i]+taps-1 with weights
// weights[i*taps ...]. Every output uses the same tap count (zero-padded) so the inner
// loops have a fixed trip count.
struct AxisWeights {
  int taps = 0;
  int lo = 0, hi = 0;  // inputs needed: [lo, hi)
  int* start = nullptr;
  float* weights = nullptr;
};

// out_value = pixel * scale[c] + bias[c] (pixel on 0..255) for float outputs.
struct Normalization {
  std::array<float, 3> scale{1, 1, 1}, bias{0, 0, 0};
  static Normalization from(const ImageTransformOptions& opts);
};

struct ResampleTarget {
  void* out = nullptr;
  int width = 0, height = 0;
  DType dtype = DType::F32;
  Layout layout = Layout::CHW;
};

}  // namespace stoker
