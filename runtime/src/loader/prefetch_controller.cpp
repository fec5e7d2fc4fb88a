#include "stoker/loader/prefetch_controller.hpp"

#include <algorithm>
#include <cstdio>

#include "stoker/error.hpp"

namespace stoker {

const char* to_string(DepthReason r) {
  switch (r) {
    case DepthReason::Start:
      return "start";
    case DepthReason::ConsumerWaited:
      return "consumer waited";
    case DepthReason::NeverWaited:
      return "consumer never waited";
  }
  return "?";
}

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
    : config_(config) {
  max_depth_ = config.max_depth;
  if (config.mem_budget > 0 && config.batch_bytes > 0) {
    uint64_t fit = config.mem_budget / config.batch_bytes;
    max_depth_ = static_cast<int>(std::min<uint64_t>(fit, static_cast<uint64_t>(max_depth_)));
  }
  if (max_depth_ < 1) {
    throw Error("prefetch controller",
                "a batch of " + std::to_string(config.batch_bytes) +
                    " bytes does not fit the memory budget of " +
                    std::to_string(config.mem_budget) + " bytes (max depth " +
                    std::to_string(config.max_depth) + ")",
                "lower the batch size or raise the memory budget");
  }
  min_depth_ = std::clamp(config.min_depth, 1, max_depth_);
  depth_ = std::clamp(config.initial_depth, min_depth_, max_depth_);
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
    } else if (depth_ < max_depth_) {
      change(obs, depth_ + 1, DepthReason::ConsumerWaited);
      cooldown_ = static_cast<uint64_t>(depth_);
    }
  } else if (calm_streak_ >= static_cast<uint64_t>(std::max(config_.calm_batches, 1)) &&
             depth_ > min_depth_) {
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
