// The run's timeline: the consumer's wait share and the ring's depth over time, in a fixed
// number of points, for the run record (record/run_record.hpp) and `stoker report --html`.
//
// Fixed size, no allocation: fed once per delivered batch under the loader's lock, it
// keeps kPoints points of `span` each, starting at kFirstSpanNs; when the run outgrows
// them, neighbouring points merge in pairs and the span doubles. A run of any length
// ends with between kPoints/2 and kPoints points.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace stoker {

class RunTimeline {
 public:
  static constexpr int kPoints = 48;
  static constexpr uint64_t kFirstSpanNs = 10'000'000;  // 10 ms: a short run still gets a curve

  struct Point {
    uint64_t wait_ns = 0;  // the consumer's wait within the point
    int depth = 0;         // the deepest ring within the point
    bool used = false;     // a batch was delivered within it
  };

  // One delivered batch at `t_ns` since the first request, after a wait of `wait_ns`,
  // with the ring at `depth` (the depth in effect since the previous batch) of `max_depth`.
  void observe(uint64_t t_ns, uint64_t wait_ns, int depth, int max_depth);

  uint64_t span_ns() const { return span_ns_; }
  int points() const { return used_; }  // points up to the last delivered batch
  const Point& point(int i) const { return points_[static_cast<size_t>(i)]; }
  // The wait share of point i: its wait over its span (the last one: over the time it covers).
  double wait_share(int i) const;
  int deepest() const { return deepest_; }           // the deepest ring of the run
  uint64_t at_max_ns() const { return at_max_ns_; }  // time the ring sat at its max depth
  uint64_t last_ns() const { return last_ns_; }

 private:
  void halve();  // merges the points in pairs and doubles the span

  std::array<Point, kPoints> points_{};
  uint64_t span_ns_ = kFirstSpanNs;
  int used_ = 0;
  int deepest_ = 0;
  uint64_t at_max_ns_ = 0, last_ns_ = 0;
};

}  // namespace stoker
