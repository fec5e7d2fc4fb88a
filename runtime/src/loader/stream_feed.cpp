#include "loader/stream_feed.hpp"

#include <algorithm>
#include <cstring>

#include "distributed/stream_order.hpp"
#include "topology/thread_start.hpp"

namespace stoker {

StreamFeed::StreamFeed(const ShardStreamSource& source, uint64_t capacity, uint64_t batch_size,
                       bool drop_last)
    : source_(source), batch_size_(batch_size), drop_last_(drop_last), entries_(capacity) {
  free_.reserve(entries_.size());
  for (size_t i = entries_.size(); i-- > 0;) free_.push_back(static_cast<int>(i));
  thread_ = start_thread("the stream reader thread", "", [this] { run(); });
}

StreamFeed::~StreamFeed() {
  stop();
}

void StreamFeed::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  reader_cv_.notify_all();
  taker_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t StreamFeed::used(uint64_t length) const {
  return drop_last_ ? length / batch_size_ * batch_size_ : length;
}

StreamFeed::Epoch* StreamFeed::find(uint64_t epoch) {
  for (Epoch& e : epochs_) {
    if (e.epoch == epoch) return &e;
  }
  return nullptr;
}

void StreamFeed::restart(uint64_t gen, const DistributedSampler& sampler) {
  {
    std::unique_lock lk(mu_);
    gen_ = gen;
    taker_cv_.notify_all();
    taker_cv_.wait(lk, [&] { return copying_ == 0; });  // no entry is being copied out
    pending_ = sampler;
    consumer_epoch_ = sampler.epoch();
    epochs_.clear();
    failure_.reset();
    free_.clear();
    for (size_t i = entries_.size(); i-- > 0;) {
      if (static_cast<int>(i) != reading_) free_.push_back(static_cast<int>(i));
    }
  }
  reader_cv_.notify_all();
}

void StreamFeed::consumer_at(uint64_t epoch) {
  {
    std::lock_guard lk(mu_);
    consumer_epoch_ = std::max(consumer_epoch_, epoch);
  }
  reader_cv_.notify_all();
}

RawSample StreamFeed::take(uint64_t gen, const DistributedSampler& sampler, uint64_t i,
                           std::vector<std::byte>& scratch) {
  const uint64_t epoch = sampler.epoch(), read = sampler.stream_order()->read_of(i);
  std::unique_lock lk(mu_);
  int e = -1;
  for (;;) {
    if (stop_ || gen != gen_) throw Stale{};
    const Epoch* ep = find(epoch);
    if (ep != nullptr && (e = ep->entry[read]) >= 0) break;
    if (failure_ &&
        (epoch > failure_->epoch || (epoch == failure_->epoch && read >= failure_->read))) {
      throw Error(failure_->where, failure_->what, failure_->todo);
    }
    taker_cv_.wait(lk);
  }
  ++copying_;
  lk.unlock();
  Entry& entry = entries_[static_cast<size_t>(e)];  // refs > 0: not refilled meanwhile
  const size_t n = entry.bytes.size();
  if (scratch.size() < n) scratch.resize(n);
  std::memcpy(scratch.data(), entry.bytes.data(), n);
  const int64_t label = entry.label;
  std::optional<SampleError> cut = entry.cut;
  lk.lock();
  --copying_;
  bool freed = false;
  if (gen == gen_) {
    if (--entry.refs == 0) {
      free_.push_back(e);
      freed = true;
    }
    --find(epoch)->left;
    while (epochs_.size() > 1 && epochs_.front().left == 0) epochs_.pop_front();
  } else if (copying_ == 0) {
    taker_cv_.notify_all();  // restart() waits for this
  }
  lk.unlock();
  if (freed) reader_cv_.notify_one();
  if (cut) {
    cut->index = sampler.at(i);
    throw *cut;
  }
  return {{scratch.data(), n}, label};
}

ReadCounters StreamFeed::counters() const {
  std::lock_guard lk(mu_);
  ReadCounters c = done_counters_;
  c += cursor_counters_;
  return c;
}

// ---- the reader thread ----

void StreamFeed::run() {
  for (;;) {
    std::optional<DistributedSampler> s;
    uint64_t gen = 0;
    {
      std::unique_lock lk(mu_);
      reader_cv_.wait(lk, [&] { return stop_ || pending_.has_value(); });
      if (stop_) return;
      s.swap(pending_);
      gen = gen_;
    }
    read_schedule(gen, std::move(*s));
  }
}

void StreamFeed::read_schedule(uint64_t gen, DistributedSampler s) {
  uint64_t at_read = 0;
  try {
    while (read_epoch(gen, s, at_read)) s.set_epoch(s.epoch() + 1);
    return;  // the generation ended
  } catch (const Error& e) {
    std::lock_guard lk(mu_);
    if (gen == gen_) failure_ = Failure{s.epoch(), at_read, e.where(), e.problem(), e.todo()};
  } catch (const std::exception& e) {
    std::lock_guard lk(mu_);
    if (gen == gen_) failure_ = Failure{s.epoch(), at_read, "stream reader", e.what(), ""};
  }
  {
    std::lock_guard lk(mu_);
    if (reading_ >= 0) free_.push_back(reading_);  // never in the pool while being filled
    reading_ = -1;
  }
  taker_cv_.notify_all();  // the takers waiting past the failure throw it
}

namespace {

// Passes over the cursor's next sample; a cut shard's rest counts as one.
bool skip_sample(ShardCursor& cursor, int64_t& label) {
  try {
    return cursor.next(nullptr, label);
  } catch (const SampleError&) {
    return true;
  }
}

}  // namespace

bool StreamFeed::read_epoch(uint64_t gen, const DistributedSampler& s, uint64_t& at_read) {
  const StreamOrder& order = *s.stream_order();
  std::vector<uint8_t> uses(order.reads(), 0);
  const uint64_t n = used(order.length());
  for (uint64_t i = 0; i < n; ++i) ++uses[order.read_of(i)];
  {
    std::unique_lock lk(mu_);
    reader_cv_.wait(lk, [&] { return stop_ || gen != gen_ || s.epoch() <= consumer_epoch_; });
    if (stop_ || gen != gen_) return false;
    epochs_.push_back({s.epoch(), std::vector<int32_t>(order.reads(), -1), n});
  }
  taker_cv_.notify_all();
  std::unique_ptr<ShardCursor> cursor;
  uint32_t shard = 0;
  uint64_t next = 0, read = 0;  // next: the cursor's sample number in its shard
  int64_t label = -1;
  const auto short_shard = [&] {
    return Error(source_.shard_name(shard),
                 "ends before its sample " + std::to_string(next) +
                     ", which it held when it was indexed (it changed while in use?)",
                 "restart the job; rewrite shards under new names, not in place");
  };
  for (const StreamOrder::Run& run : order.runs()) {
    if (!cursor || shard != run.shard || next > run.first) {
      close_cursor(cursor);
      cursor = source_.open_shard(run.shard);
      shard = run.shard;
      next = 0;
    }
    for (; next < run.first; ++next) {
      if (!skip_sample(*cursor, label)) throw short_shard();
    }
    for (uint64_t k = 0; k < run.count; ++k, ++read, ++next) {
      at_read = read;
      if (uses[read] == 0) {  // only in a dropped last batch
        if (!skip_sample(*cursor, label)) throw short_shard();
        continue;
      }
      const int e = acquire(gen);
      if (e < 0) return false;
      Entry& entry = entries_[static_cast<size_t>(e)];
      entry.cut.reset();
      try {
        if (!cursor->next(&entry.bytes, label)) throw short_shard();
      } catch (const SampleError& cut) {  // the rest of a cut shard: one corrupt sample
        entry.bytes.clear();
        entry.cut = cut;
        label = -1;
      }
      if (!publish(gen, s.epoch(), read, e, label, uses[read], cursor->counters())) return false;
    }
  }
  close_cursor(cursor);
  return true;
}

int StreamFeed::acquire(uint64_t gen) {
  std::unique_lock lk(mu_);
  reader_cv_.wait(lk, [&] { return stop_ || gen != gen_ || !free_.empty(); });
  if (stop_ || gen != gen_) return -1;
  reading_ = free_.back();
  free_.pop_back();
  return reading_;
}

bool StreamFeed::publish(uint64_t gen, uint64_t epoch, uint64_t read, int entry, int64_t label,
                         uint8_t uses, const ReadCounters& cursor) {
  {
    std::lock_guard lk(mu_);
    reading_ = -1;
    cursor_counters_ = cursor;
    if (stop_ || gen != gen_) {
      free_.push_back(entry);  // restart() left it out of the pool while it was filled
      return false;
    }
    entries_[static_cast<size_t>(entry)].label = label;
    entries_[static_cast<size_t>(entry)].refs = uses;
    find(epoch)->entry[read] = entry;
  }
  taker_cv_.notify_all();
  return true;
}

void StreamFeed::close_cursor(std::unique_ptr<ShardCursor>& cursor) {
  if (!cursor) return;
  std::lock_guard lk(mu_);
  done_counters_ += cursor->counters();
  cursor_counters_ = {};
  cursor.reset();
}

}  // namespace stoker
