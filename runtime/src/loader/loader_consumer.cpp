// LoaderCore's consumer side (one consumer thread): epochs and loops, next() and its
// wait, the resume state. The workers' side is in loader_core.cpp.
#include <algorithm>
#include <cassert>

#include "loader/loader_core.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"

namespace stoker {

void LoaderCore::reset_locked(const DistributedSampler& s) {
  ++gen_;
  for (uint64_t seq = consume_seq_; seq < next_seq_; ++seq) {
    int& cell = ring_[seq % static_cast<uint64_t>(slots_)];
    if (cell >= 0) {
      free_.push_back(cell);
      ++totals_.discarded_batches;
      cell = -1;
    }
  }
  next_seq_ = consume_seq_;
  ready_ = 0;
  stream_.sampler = s;
  stream_.number = 0;
  stream_.batches = batches_for(s);
  if (feed_) feed_->restart(gen_, s);
}

void LoaderCore::set_epoch(uint64_t epoch) {
  std::lock_guard lk(mu_);
  next_epoch_ = epoch;
  // set_epoch(e) at the top of each loop (PyTorch style) keeps a restore into epoch e.
  if (pending_restore_ && pending_restore_->epoch() != epoch) pending_restore_.reset();
}

DistributedSampler LoaderCore::next_loop() const {
  std::lock_guard lk(mu_);
  if (pending_restore_) return *pending_restore_;
  DistributedSampler s = sampler_;
  s.set_epoch(next_epoch_);
  return s;
}

void LoaderCore::start_epoch() {
  std::optional<DistributedSampler> s = next_loop();
  // Collective under MPI: every rank starts its loops at the same points.
  if (opt_.agree) agree_on_epoch(sampler_.options(), s->epoch());
  {
    std::lock_guard lk(mu_);
    bool prepared = boundary_ && boundary_epoch_ == s->epoch() && !pending_restore_ &&
                    !(loop_.active && loop_.pos < loop_.total);
    if (!prepared) reset_locked(*s);
    if (feed_) feed_->consumer_at(s->epoch());
    pending_restore_.reset();
    loop_ = Loop{true, false, s, s->epoch(), 0, batches_for(*s), true};
    boundary_ = false;
    if (loop_.total == 0) {  // a restore at the very end of an epoch
      next_epoch_ = loop_.epoch + 1;
      boundary_ = true;
      boundary_epoch_ = next_epoch_;
    }
  }
  work_cv_.notify_all();
}

std::optional<Batch> LoaderCore::next(Batch* recycle) {
  std::optional<Batch> out;
  take(recycle, std::nullopt, out);
  return out;
}

LoaderCore::Delivery LoaderCore::next_within(std::chrono::nanoseconds limit,
                                             std::optional<Batch>& out) {
  return take(nullptr, Clock::now() + limit, out);
}

LoaderCore::Delivery LoaderCore::take(Batch* recycle, std::optional<Clock::time_point> deadline,
                                      std::optional<Batch>& out) {
  std::unique_lock lk(mu_);
  if (recycle != nullptr && recycle->core_.get() == this) {
    free_.push_back(recycle->slot_);  // the loop's previous batch: same lock, no extra wakeup
    recycle->clear();
  }
  if (!loop_.active) {
    lk.unlock();
    start_epoch();
    lk.lock();
  }
  if (loop_.failed || loop_.pos >= loop_.total) return Delivery::End;
  const uint64_t seq = consume_seq_;
  int& cell = ring_[seq % static_cast<uint64_t>(slots_)];
  // The wait is from asking for this batch to getting it, whatever later ones are ready; a
  // limited wait that gave up keeps its ask for the next call.
  // An ask a limited wait gave up on (carried) has waited since it was made, even when its
  // batch arrived between two calls: the wait is counted from then, whatever the cell holds.
  bool carried = true;
  if (!ask_.open || ask_.seq != seq || ask_.gen != gen_) {
    carried = false;
    ask_ = Ask{true, seq, gen_, now_ns(), ready_, ring_filled_};
#ifndef NDEBUG  // the Debug builds (the sanitizer stage's tests) check the count by a scan
    int scanned = 0;
    for (uint64_t s = seq; s < next_seq_; ++s)
      scanned += ring_[s % static_cast<uint64_t>(slots_)] >= 0;
    assert(scanned == ready_);
#endif
    ring_filled_ = false;
    if (!requested_) {
      requested_ = true;
      first_request_ns_ = ask_.asked_ns;
    }
  }
  const bool blocked = cell < 0 || carried;
  while (cell < 0) {
    if (next_seq_ == seq && free_.empty() && busy_ == 0) {
      ask_.open = false;
      throw Error(
          "loader",
          "the consumer holds all " + std::to_string(slots_) + " batch slots and asks for another",
          "release batches before asking for more, or raise held_batches");
    }
    if (!deadline) {
      ready_cv_.wait(lk);
    } else if (ready_cv_.wait_until(lk, *deadline) == std::cv_status::timeout && cell < 0) {
      return Delivery::NotYet;
    }
  }
  ask_.open = false;
  const uint64_t asked = ask_.asked_ns;
  const uint64_t got = blocked ? now_ns() : asked;
  const uint64_t wait = got - asked;
  const int slot = cell;
  cell = -1;
  --ready_;
  ++consume_seq_;
  ++loop_.pos;
  Slot& m = meta_[static_cast<size_t>(slot)];
  totals_.stages += m.times;
  totals_.produce_ns += m.produce_ns;
  totals_.consumer_wait_ns += wait;
  totals_.skipped += m.skipped;
  totals_.decode_warnings += m.warned;
  last_delivery_ns_ = got;
  if (loop_.first_pending) {
    loop_.first_pending = false;
    first_batches_.push_back({loop_.epoch, wait});
  }
  if (std::optional<Error> failure = loop_failure_locked(m)) {
    loop_.failed = true;
    free_.push_back(slot);
    lk.unlock();
    work_cv_.notify_all();
    throw *failure;
  }
  totals_.batches += 1;
  totals_.samples += m.count;
  totals_.bytes += m.count * sample_bytes_;
  int old_depth = depth_;
  if (opt_.adaptive) {
    depth_ = controller_.observe({got, wait, m.produce_ns, ask_.ready, ask_.filled});
  }
  totals_.timeline.observe(got - first_request_ns_, wait, old_depth, controller_.max_depth());
  if (loop_.pos == loop_.total) {  // the producers already run on into the next epoch
    next_epoch_ = loop_.epoch + 1;
    boundary_ = true;
    boundary_epoch_ = next_epoch_;
  }
  lk.unlock();
  if (depth_ > old_depth) {
    work_cv_.notify_all();
  } else {
    work_cv_.notify_one();  // the window moved by one
  }
  out = make_batch(slot);
  return Delivery::Batch;
}

bool LoaderCore::next_ready() {
  std::lock_guard lk(mu_);
  if (!loop_.active) return false;  // next() would start an epoch and wait for its first batch
  if (loop_.failed || loop_.pos >= loop_.total) return true;
  return ring_[consume_seq_ % static_cast<uint64_t>(slots_)] >= 0;
}

std::optional<Error> LoaderCore::loop_failure_locked(const Slot& m) {
  loop_.attempted += m.count + m.skipped;
  loop_.skipped += m.skipped;
  if (m.failed) return Error(m.fail_where, m.fail_what, m.fail_todo);
  return skips_.check(loop_.epoch, loop_.attempted, loop_.skipped, loop_.pos == loop_.total);
}

Batch LoaderCore::make_batch(int slot) {
  const Slot& m = meta_[static_cast<size_t>(slot)];
  Batch b;
  b.core_ = shared_from_this();
  b.slot_ = slot;
  b.data_ = arena_.data(slot);
  b.indices_ = m.indices.data();
  if (opt_.mix) {
    b.shape_ = {nullptr,
                &spec_,
                m.count,
                batch_size_,
                m.epoch,
                m.number,
                reinterpret_cast<const float*>(arena_.label_area(slot)),
                opt_.mix->classes()};
  } else {
    b.shape_ = {arena_.labels(slot), &spec_, m.count, batch_size_, m.epoch, m.number};
  }
  return b;
}

uint64_t LoaderCore::epoch() const {
  std::lock_guard lk(mu_);
  return loop_.active && !loop_.failed && loop_.pos < loop_.total ? loop_.epoch : next_epoch_;
}

int LoaderCore::depth() const {
  std::lock_guard lk(mu_);
  return depth_;
}

SamplerState LoaderCore::state(uint64_t held_back) const {
  std::lock_guard lk(mu_);
  const uint64_t taken = loop_.pos - std::min(held_back, loop_.pos);
  if (loop_.active && taken < loop_.total) {
    return loop_.sampler->state(std::min(taken * batch_size_, loop_.sampler->length()));
  }
  if (pending_restore_) return pending_restore_->state(0);
  DistributedSampler s = sampler_;
  s.set_epoch(next_epoch_);
  return s.state(0);
}

void LoaderCore::restore(const SamplerState& state) {
  DistributedSampler s = sampler_;
  s.restore(state);  // throws for another dataset, seed or format: nothing changed yet
  std::lock_guard lk(mu_);
  pending_restore_ = s;
  next_epoch_ = s.epoch();
  loop_.active = false;
}

}  // namespace stoker
