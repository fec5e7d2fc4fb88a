#include "stoker/loader/run_timeline.hpp"

#include <algorithm>

namespace stoker {

void RunTimeline::observe(uint64_t t_ns, uint64_t wait_ns, int depth, int max_depth) {
  t_ns = std::max(t_ns, last_ns_);
  if (depth >= max_depth) at_max_ns_ += t_ns - last_ns_;
  last_ns_ = t_ns;
  deepest_ = std::max(deepest_, depth);
  while (t_ns / span_ns_ >= kPoints) halve();
  const int i = static_cast<int>(t_ns / span_ns_);
  Point& p = points_[static_cast<size_t>(i)];
  p.wait_ns += wait_ns;
  p.depth = std::max(p.depth, depth);
  p.used = true;
  used_ = std::max(used_, i + 1);
}

void RunTimeline::halve() {
  for (int i = 0; i < kPoints / 2; ++i) {
    const Point& a = points_[static_cast<size_t>(2 * i)];
    const Point& b = points_[static_cast<size_t>(2 * i + 1)];
    points_[static_cast<size_t>(i)] = {a.wait_ns + b.wait_ns, std::max(a.depth, b.depth),
                                       a.used || b.used};
  }
  std::fill(points_.begin() + kPoints / 2, points_.end(), Point{});
  used_ = (used_ + 1) / 2;
  span_ns_ *= 2;
}

double RunTimeline::wait_share(int i) const {
  const uint64_t start = static_cast<uint64_t>(i) * span_ns_;
  const uint64_t covered = i + 1 == used_ ? std::min(span_ns_, last_ns_ - start) : span_ns_;
  if (covered == 0) return 0.0;
  return std::min(1.0, static_cast<double>(points_[static_cast<size_t>(i)].wait_ns) /
                           static_cast<double>(covered));
}

}  // namespace stoker
