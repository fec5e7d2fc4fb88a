#include "loader/loader_core.hpp"

#include <algorithm>

#include "stoker/common/error.hpp"
#include "stoker/transforms/decode_warnings.hpp"

namespace stoker {

namespace {
uint64_t elapsed_ns(std::chrono::steady_clock::time_point a,
                    std::chrono::steady_clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}
}  // namespace

void leak_in_forked_child(std::shared_ptr<LoaderCore> core) {
  new std::shared_ptr<LoaderCore>(std::move(core));  // never deleted: the child's exit frees it
}

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
  m.warned = 0;
  m.failed = false;
  const auto start = Clock::now();
  std::byte* out = arena_.data(job.slot);
  int64_t* labels = arena_.labels(job.slot);
  const DistributedSampler& sampler = *job.sampler;
  const uint64_t first = job.number * batch_size_;
  const uint64_t n = std::min<uint64_t>(batch_size_, sampler.length() - first);
  const uint64_t seed = sampler.options().seed;
  for (uint64_t k = 0; k < n; ++k) {
    if (stopping_.load(std::memory_order_relaxed)) break;  // closed: the slot is discarded
    uint64_t index = 0;
    try {
      index = sampler.at(first + k);
      const auto t = Clock::now();
      RawSample raw = feed_ ? feed_->take(job.gen, sampler, first + k, scratch.read)
                            : source_->read(index, scratch.read);
      m.times.read_ns += elapsed_ns(t, Clock::now());
      const uint64_t warned_before = decode_warnings_on_this_thread().images;
      const SampleKey key{seed, job.epoch, index, sampler.repetition(first + k)};
      transform_->apply(raw, key, out + m.count * sample_bytes_, scratch, m.times);
      if (decode_warnings_on_this_thread().images != warned_before) {
        ++m.warned;
        skips_.note_warning(index, source_->location(index), decode_warnings_on_this_thread().last);
      }
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
    } catch (const Error& e) {  // it names its input (a file that shrank) and what to do
      m.failed = true;
      m.fail_where = e.where();
      m.fail_what = "reading sample " + std::to_string(index) + " (" + source_->location(index) +
                    ") failed: " + e.problem();
      m.fail_todo = e.todo();
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
  ++ready_;
  // The consumer waits for this sequence number, or (holding every slot) on busy_.
  return job.seq == consume_seq_ || (busy_ == 0 && free_.empty());
}

void LoaderCore::wait_started() {
  std::unique_lock lk(mu_);
  ready_cv_.wait(lk, [&] { return started_ == workers_; });
}

std::vector<std::string> LoaderCore::pin_arena() {
  if (!opt_.plan->pin_memory && !opt_.force_pin) return {};
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
    stopping_.store(true, std::memory_order_relaxed);
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
