#include "loader/loader_core.hpp"

#include <algorithm>

#include "stoker/distributed/coordination.hpp"
#include "stoker/error.hpp"

namespace stoker {

namespace {
uint64_t elapsed_ns(std::chrono::steady_clock::time_point a,
                    std::chrono::steady_clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}
}  // namespace

LoaderCore::LoaderCore(Setup s)
    : source_(std::move(s.source)),
      transform_(std::move(s.transform)),
      spec_(std::move(s.spec)),
      sample_bytes_(spec_.bytes()),
      batch_size_(s.options.batch_size),
      opt_(std::move(s.options)),
      skips_(opt_),
      sampler_(s.sampler),
      workers_(s.workers),
      slots_(s.slots),
      arena_(s.slots, batch_size_, sample_bytes_, BatchArena::nodes_for(*opt_.plan)),
      meta_(static_cast<size_t>(s.slots)),
      scratch_(static_cast<size_t>(s.workers)),
      t0_(Clock::now()),
      ring_(static_cast<size_t>(s.slots), -1),
      controller_(s.controller) {
  for (Slot& m : meta_) m.indices.resize(batch_size_);
  free_.reserve(static_cast<size_t>(slots_));
  for (int i = slots_ - 1; i >= 0; --i) free_.push_back(i);
  depth_ = controller_.depth();
  first_batches_.reserve(256);
  totals_.adaptive = opt_.adaptive;
  if (sampler_.stream_order() != nullptr) {  // room for the shuffle buffer and every slot
    const uint64_t room = sampler_.options().shuffle_buffer + (slots_ + 1) * batch_size_ + 2;
    feed_ = std::make_unique<StreamFeed>(dynamic_cast<const ShardStreamSource&>(*source_), room,
                                         batch_size_, opt_.drop_last);
  }
}

uint64_t LoaderCore::now_ns() const {
  return elapsed_ns(t0_, Clock::now());
}

uint64_t LoaderCore::batches_for(const DistributedSampler& s) const {
  uint64_t n = s.length();
  return opt_.drop_last ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

// ---- worker side ----

void LoaderCore::work(int w) {
  // First touch from this (pinned) thread places the pages near its cores.
  for (int s = w; s < slots_; s += workers_) arena_.touch_slot(s);
  {
    std::lock_guard lk(mu_);
    ++started_;
  }
  ready_cv_.notify_all();
  Scratch& scratch = scratch_[static_cast<size_t>(w)];
  // One lock per batch: handing in the finished batch and taking the next job share it.
  std::optional<Job> done;
  for (;;) {
    Job job;
    bool wake_consumer = false;
    {
      std::unique_lock lk(mu_);
      if (done) wake_consumer = complete_locked(*done);
      if (!stop_ && !can_take()) {
        if (wake_consumer) {  // about to sleep: wake the consumer first, without the lock
          lk.unlock();
          ready_cv_.notify_all();
          wake_consumer = false;
          lk.lock();
        }
        work_cv_.wait(lk, [&] { return stop_ || can_take(); });
      }
      if (stop_) {
        lk.unlock();
        if (wake_consumer) ready_cv_.notify_all();
        return;
      }
      job = take_job();
    }
    if (wake_consumer) ready_cv_.notify_all();
    fill(job, scratch);
    done = job;
  }
}

bool LoaderCore::can_take() {
  if (!open_ || free_.empty()) return false;
  if (next_seq_ - consume_seq_ >= static_cast<uint64_t>(depth_)) {
    ring_filled_ = true;  // the producers are ahead by the whole depth
    return false;
  }
  return true;
}

LoaderCore::Job LoaderCore::take_job() {
  // The schedule runs on into the following epochs by itself (their order is a pure
  // function of seed and epoch); an epoch left with no batch (after a restore) is passed.
  while (stream_.number >= stream_.batches) {
    stream_.sampler->set_epoch(stream_.sampler->epoch() + 1);
    stream_.number = 0;
    stream_.batches = batches_for(*stream_.sampler);
  }
  Job job;
  job.seq = next_seq_++;
  job.gen = gen_;
  job.epoch = stream_.sampler->epoch();
  job.number = stream_.number++;
  job.sampler = stream_.sampler;
  job.slot = free_.back();
  free_.pop_back();
  ++busy_;
  return job;
}

void LoaderCore::fill(const Job& job, Scratch& scratch) {
  Slot& m = meta_[static_cast<size_t>(job.slot)];
  m.count = 0;
  m.epoch = job.epoch;
  m.number = job.number;
  m.times = {};
  m.skipped = 0;
  m.failed = false;
  const auto start = Clock::now();
  std::byte* out = arena_.data(job.slot);
  int64_t* labels = arena_.labels(job.slot);
  const DistributedSampler& sampler = *job.sampler;
  const uint64_t first = job.number * batch_size_;
  const uint64_t n = std::min<uint64_t>(batch_size_, sampler.length() - first);
  const uint64_t seed = sampler.options().seed;
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t index = 0;
    try {
      index = sampler.at(first + k);
      const auto t = Clock::now();
      RawSample raw = feed_ ? feed_->take(job.gen, sampler, first + k, scratch.read)
                            : source_->read(index, scratch.read);
      m.times.read_ns += elapsed_ns(t, Clock::now());
      transform_->apply(raw, SampleKey{seed, job.epoch, index}, out + m.count * sample_bytes_,
                        scratch, m.times);
      labels[m.count] = raw.label;
      m.indices[m.count] = index;
      ++m.count;
    } catch (const StreamFeed::Stale&) {
      break;  // a dropped schedule's job: its slot is discarded
    } catch (const SampleError& e) {
      const std::string where = e.location.empty() ? source_->location(index) : e.location;
      if (opt_.on_corrupt == CorruptPolicy::Skip) {
        ++m.skipped;
        skips_.note(index, where, e.what);
        continue;
      }
      m.failed = true;
      m.fail_where = where;
      m.fail_what = "sample " + std::to_string(index) + " is corrupt: " + e.what;
      m.fail_todo = skips_.error_todo();
      break;
    } catch (const std::exception& e) {
      m.failed = true;
      m.fail_where = source_->location(index);
      m.fail_what = "reading sample " + std::to_string(index) + " failed: " + e.what();
      m.fail_todo = SkipLog::kNotCorrupt;
      break;
    } catch (...) {
      m.failed = true;
      m.fail_where = source_->location(index);
      m.fail_what = "reading sample " + std::to_string(index) + " failed (unknown exception)";
      m.fail_todo = SkipLog::kNotCorrupt;
      break;
    }
  }
  m.produce_ns = elapsed_ns(start, Clock::now());
}

bool LoaderCore::complete_locked(const Job& job) {
  --busy_;
  if (job.gen != gen_) {
    free_.push_back(job.slot);  // made for a schedule that was dropped
    ++totals_.discarded_batches;
    return false;
  }
  ring_[job.seq % static_cast<uint64_t>(slots_)] = job.slot;
  // The consumer waits for this sequence number, or (holding every slot) on busy_.
  return job.seq == consume_seq_ || (busy_ == 0 && free_.empty());
}

void LoaderCore::wait_started() {
  std::unique_lock lk(mu_);
  ready_cv_.wait(lk, [&] { return started_ == workers_; });
}

std::vector<std::string> LoaderCore::pin_arena() {
  if (!opt_.plan->pin_memory) return {};
  if (!opt_.pinner) {
    return {
        "arena not page-locked: the plan asks for pinned memory but no HostPinner was "
        "given (a build without CUDA, or no GPU)"};
  }
  arena_.pin(opt_.pinner);
  return {};
}

void LoaderCore::open() {
  {
    std::lock_guard lk(mu_);
    open_ = true;
    reset_locked(sampler_);
    boundary_ = true;
    boundary_epoch_ = sampler_.epoch();
  }
  work_cv_.notify_all();
}

void LoaderCore::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  ready_cv_.notify_all();
  if (feed_) feed_->stop();
}

void LoaderCore::release(int slot) {
  {
    std::lock_guard lk(mu_);
    free_.push_back(slot);
  }
  work_cv_.notify_one();
}

// ---- consumer side ----

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

void LoaderCore::start_epoch() {
  std::optional<DistributedSampler> s;
  {
    std::lock_guard lk(mu_);
    if (pending_restore_) {
      s = *pending_restore_;
    } else {
      s = sampler_;
      s->set_epoch(next_epoch_);
    }
  }
  // Collective under MPI: every rank starts its loops at the same points.
  agree_on_epoch(sampler_.options(), s->epoch());
  {
    std::lock_guard lk(mu_);
    bool prepared = boundary_ && boundary_epoch_ == s->epoch() && !pending_restore_ &&
                    !(loop_.active && loop_.pos < loop_.total);
    if (!prepared) reset_locked(*s);
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
  if (loop_.failed || loop_.pos >= loop_.total) return std::nullopt;
  const uint64_t seq = consume_seq_;
  int& cell = ring_[seq % static_cast<uint64_t>(slots_)];
  int ready = 0;
  for (uint64_t s = seq; s < next_seq_; ++s) ready += ring_[s % static_cast<uint64_t>(slots_)] >= 0;
  const bool filled = ring_filled_;
  ring_filled_ = false;
  const uint64_t asked = now_ns();
  if (!requested_) {
    requested_ = true;
    first_request_ns_ = asked;
  }
  // The wait is from asking for this batch to getting it, whatever later ones are ready.
  const bool blocked = cell < 0;
  while (cell < 0) {
    if (next_seq_ == seq && free_.empty() && busy_ == 0) {
      throw Error(
          "loader",
          "the consumer holds all " + std::to_string(slots_) + " batch slots and asks for another",
          "release batches before asking for more, or raise held_batches");
    }
    ready_cv_.wait(lk);
  }
  const uint64_t got = blocked ? now_ns() : asked;
  const uint64_t wait = got - asked;
  const int slot = cell;
  cell = -1;
  ++consume_seq_;
  ++loop_.pos;
  Slot& m = meta_[static_cast<size_t>(slot)];
  totals_.stages += m.times;
  totals_.produce_ns += m.produce_ns;
  totals_.consumer_wait_ns += wait;
  totals_.skipped += m.skipped;
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
    depth_ = controller_.observe({got, wait, m.produce_ns, ready, filled});
  }
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
  return make_batch(slot);
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
  b.labels_ = arena_.labels(slot);
  b.indices_ = m.indices.data();
  b.spec_ = &spec_;
  b.size_ = m.count;
  b.capacity_ = batch_size_;
  b.epoch_ = m.epoch;
  b.number_ = m.number;
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

SamplerState LoaderCore::state() const {
  std::lock_guard lk(mu_);
  if (loop_.active && loop_.pos < loop_.total) {
    return loop_.sampler->state(std::min(loop_.pos * batch_size_, loop_.sampler->length()));
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

LoaderStats LoaderCore::stats(const std::vector<std::string>& extra_notes, uint64_t threads) const {
  std::lock_guard lk(mu_);
  LoaderStats st = totals_;
  st.wall_ns = requested_ ? last_delivery_ns_ - first_request_ns_ : 0;
  st.wait_share = st.wall_ns ? static_cast<double>(st.consumer_wait_ns) / st.wall_ns : 0.0;
  st.workers = workers_;
  st.threads_created = threads;
  st.depth = depth_;
  st.max_depth = controller_.max_depth();
  st.slots = slots_;
  st.slot_bytes = arena_.slot_bytes();
  st.arena_bytes = arena_.bytes();
  st.mem_budget = opt_.plan->mem_budget;
  st.numa_bound = arena_.numa_bound();
  st.pinned = arena_.pinned();
  st.depth_history = controller_.history();
  st.producer_bound_waits = controller_.producer_bound_waits();
  st.epoch_first_batch = first_batches_;
  st.skipped_files = skips_.files();
  st.notes = arena_.notes();
  st.notes.insert(st.notes.end(), extra_notes.begin(), extra_notes.end());
  return st;
}

}  // namespace stoker
