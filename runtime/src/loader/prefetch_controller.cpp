#include "stoker/loader/prefetch_controller.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "stoker/common/error.hpp"

namespace stoker {

std::string DepthChange::describe() const {
  char buf[160];
  if (reason == DepthReason::ConsumerWaited) {
    std::snprintf(buf, sizeof buf, "batch %llu: %d -> %d (consumer waited %.2f ms)",
                  static_cast<unsigned long long>(batch), from, to, wait_ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "batch %llu: %d -> %d (%s)",
                  static_cast<unsigned long long>(batch), from, to, to_string(reason));
  }
  return buf;
}

PrefetchController::PrefetchController(const ControllerConfig& config, uint64_t start_ns)
    : config_(config), depth_(config.initial_depth) {
  const auto check = [](const char* name, int value, int lo, int hi) {
    if (value < lo || value > hi) {
      throw Error(std::string("prefetch controller ") + name,
                  "is " + std::to_string(value) + ", outside " + std::to_string(lo) + ".." +
                      std::to_string(hi),
                  "keep 1 <= min_depth <= initial_depth <= max_depth <= " +
                      std::to_string(limits::kMaxPrefetch));
    }
  };
  check("max_depth", config.max_depth, 1, limits::kMaxPrefetch);
  check("min_depth", config.min_depth, 1, config.max_depth);
  check("initial_depth", config.initial_depth, config.min_depth, config.max_depth);
  history_.reserve(kHistoryCapacity);
  history_.push_back({start_ns, 0, 0, depth_, DepthReason::Start, 0});
}

int PrefetchController::observe(const PrefetchObservation& obs) {
  ++observed_;
  ++since_change_;
  filled_ += obs.ring_filled ? 1 : 0;
  const bool waited =
      obs.wait_ns >= std::min(config_.min_wait_ns, obs.produce_ns / 2) && obs.wait_ns > 0;
  calm_streak_ = waited ? 0 : calm_streak_ + 1;
  if (cooldown_ > 0) {
    --cooldown_;
    return depth_;
  }
  if (waited) {
    if (filled_ * 2 < since_change_) {
      ++producer_bound_waits_;  // more depth would not help: the producers are behind
    } else if (depth_ < config_.max_depth) {
      change(obs, depth_ + 1, DepthReason::ConsumerWaited);
      cooldown_ = static_cast<uint64_t>(depth_);
    }
  } else if (calm_streak_ >= static_cast<uint64_t>(std::max(config_.calm_batches, 1)) &&
             depth_ > config_.min_depth) {
    change(obs, depth_ - 1, DepthReason::NeverWaited);
  }
  return depth_;
}

void PrefetchController::change(const PrefetchObservation& obs, int to, DepthReason why) {
  if (history_.size() < kHistoryCapacity) {
    history_.push_back({obs.now_ns, observed_, depth_, to, why, obs.wait_ns});
  } else {
    ++dropped_;
  }
  depth_ = to;
  filled_ = 0;
  since_change_ = 0;
  calm_streak_ = 0;
}

}  // namespace stoker
