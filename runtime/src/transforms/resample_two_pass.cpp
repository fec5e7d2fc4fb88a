// PIL's order for a filter with negative lobes (resample.hpp: resample_two_pass): the
// horizontal filter into an 8-bit image, then the vertical one, each pass run by the fused
// kernels with the other axis's filter an identity (one tap of weight 1).
#include <vector>

#include "transforms/resample.hpp"

namespace stoker {

namespace {

// Outputs i = 0 .. n-1 each read input first + i alone.
AxisWeights identity(int first, int n, std::vector<int>& starts, std::vector<float>& weights) {
  starts.resize(n);
  weights.assign(n, 1.0f);
  for (int i = 0; i < n; ++i) starts[i] = first + i;
  return {1, first, first + n, starts.data(), weights.data()};
}

}  // namespace

void resample_two_pass(const DecodedRegion& region, const AxisWeights& h, const AxisWeights& v,
                       bool flip, const Normalization& norm, const ResampleTarget& target,
                       ResampleKernel kernel) {
  // The calling thread's buffers, grown to the largest image and then reused.
  thread_local std::vector<uint8_t> mid;
  thread_local std::vector<int> starts_rows, starts_columns;
  thread_local std::vector<float> ones_rows, ones_columns, work;
  const int width = target.width, rows = v.hi - v.lo;
  // Pass 1: input rows [v.lo, v.hi) filtered horizontally, rounded and clamped to bytes as
  // PIL's intermediate image is (the uint8 sink rounds half up and clamps to 0..255).
  const AxisWeights each_row = identity(v.lo, rows, starts_rows, ones_rows);
  mid.resize(static_cast<size_t>(width) * rows * 3);
  work.resize(resample_work_floats(h, each_row, width, kernel));
  resample(region, h, each_row, false, Normalization{},
           {mid.data(), width, rows, DType::U8, Layout::HWC}, work.data(), kernel);
  // Pass 2: those bytes filtered vertically into the target, flipped and normalised there.
  const DecodedRegion bytes{mid.data(), static_cast<size_t>(width) * 3, 0, v.lo, width, rows};
  const AxisWeights each_column = identity(0, width, starts_columns, ones_columns);
  work.resize(resample_work_floats(each_column, v, width, kernel));
  resample(bytes, each_column, v, flip, norm, target, work.data(), kernel);
}

}  // namespace stoker
