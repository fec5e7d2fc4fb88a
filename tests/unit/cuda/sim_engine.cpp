#include "sim_engine.hpp"

#include <cstring>
#include <sstream>

#include "stoker/common/error.hpp"

namespace stoker::test {

namespace {
std::string at(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}
}  // namespace

SimEngine::SimEngine(Duration copy_time, double gb_per_s)
    : copy_time_(copy_time), gb_per_s_(gb_per_s) {
  create_stream();  // queues_[0]: the legacy default stream
}

SimEngine::~SimEngine() {
  stop();
}

void SimEngine::stop() noexcept {
  {
    std::lock_guard lock(mu_);
    for (auto& q : queues_) q->closed = true;
  }
  cv_.notify_all();
  for (auto& q : queues_) {
    if (q->thread.joinable()) q->thread.join();
  }
}

CopyEngine::Stream SimEngine::create_stream() {
  return create_stream_on(0);
}

CopyEngine::Stream SimEngine::create_stream_on(int device) {
  std::lock_guard lock(mu_);
  Queue* q = new_queue(device, false);
  return queues_.size() == 1 ? nullptr : q;
}

CopyEngine::Stream SimEngine::create_blocking_stream() {
  std::lock_guard lock(mu_);
  return new_queue(0, true);
}

SimEngine::Queue* SimEngine::new_queue(int device, bool blocking) {
  queues_.push_back(std::make_unique<Queue>());
  Queue* q = queues_.back().get();
  q->device = device;
  q->blocking = blocking;
  q->thread = std::thread([this, q] { run(q); });
  return q;
}

bool SimEngine::on_device(Stream s) {
  std::lock_guard lock(mu_);
  return queue(s)->device == 0;
}

void SimEngine::destroy_stream(Stream s) noexcept {
  if (!s) return;
  {
    std::lock_guard lock(mu_);
    static_cast<Queue*>(s)->closed = true;  // as cudaStreamDestroy: queued work still runs
  }
  cv_.notify_all();
}

CopyEngine::Event SimEngine::create_event(bool) {
  std::lock_guard lock(mu_);
  if (create_event_budget_ == 0) {
    throw Error(where_, "cudaEventCreateWithFlags: out of memory (simulated)");
  }
  if (create_event_budget_ > 0) --create_event_budget_;
  events_.push_back(std::make_unique<SimEvent>());
  return events_.back().get();
}

void SimEngine::destroy_event(Event e) noexcept {
  if (!e) return;
  std::lock_guard lock(mu_);
  static_cast<SimEvent*>(e)->destroyed = true;
}

void SimEngine::fail_create_event_after(int after) {
  std::lock_guard lock(mu_);
  create_event_budget_ = after;
}

void SimEngine::set_pageable(bool pageable) {
  std::lock_guard lock(mu_);
  pageable_ = pageable;
}

void SimEngine::fail_elapsed(bool fail) {
  std::lock_guard lock(mu_);
  fail_elapsed_ = fail;
}

size_t SimEngine::live_handles() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (size_t i = 1; i < queues_.size(); ++i) n += !queues_[i]->closed;
  for (const auto& e : events_) n += !e->destroyed;
  return n - per_thread_.size();  // the per-thread streams are the engine's own
}

SimEngine::Queue* SimEngine::queue(Stream s) {
  if (!s || s == legacy_handle()) return queues_.front().get();
  if (s == per_thread_handle()) {
    Queue*& q = per_thread_[std::this_thread::get_id()];
    if (!q) q = new_queue(0, true);
    return q;
  }
  return static_cast<Queue*>(s);
}

// The legacy default stream's implicit synchronisation: an operation on it waits for the
// work queued before on every blocking stream, and one on a blocking stream for the legacy
// stream's. Non-blocking streams take no part.
void SimEngine::enqueue(Queue* q, Op op) {
  Queue* legacy = queues_.front().get();
  if (q == legacy) {
    for (size_t i = 1; i < queues_.size(); ++i) {
      if (queues_[i]->blocking) order_after(legacy, queues_[i].get());
    }
  } else if (q->blocking) {
    order_after(q, legacy);
  }
  q->ops.push_back(std::move(op));
}

void SimEngine::order_after(Queue* waiter, Queue* q) {
  if (q->ops.empty()) return;
  events_.push_back(std::make_unique<SimEvent>());
  SimEvent* ev = events_.back().get();
  ev->destroyed = true;  // the engine's own: not a handle a caller could leak
  Op mark;
  mark.record = ev;
  mark.gen = ++ev->recorded;
  q->ops.push_back(std::move(mark));
  Op wait;
  wait.wait = ev;
  wait.gen = ev->recorded;
  waiter->ops.push_back(std::move(wait));
}

void SimEngine::push(Stream s, Op op) {
  {
    std::lock_guard lock(mu_);
    enqueue(queue(s), std::move(op));
  }
  cv_.notify_all();
}

// One stream: its operations in order, each after the ones before it, concurrently with
// every other stream and with the host.
void SimEngine::run(Queue* q) {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return !q->ops.empty() || q->closed; });
    if (q->ops.empty()) return;  // closed, and everything queued has run
    if (SimEvent* e = q->ops.front().wait) {
      const uint64_t gen = q->ops.front().gen;
      cv_.wait(lock, [&] { return e->completed >= gen; });
    }
    const Duration time = q->ops.front().time;
    std::function<void()> body = q->ops.front().body;
    if (time.count() > 0 || body) {
      lock.unlock();
      std::this_thread::sleep_for(time);
      if (body) body();
      lock.lock();
    }
    Op& op = q->ops.front();
    if (op.record) {
      op.record->completed = std::max(op.record->completed, op.gen);
      op.record->when = Clock::now();
    }
    q->ops.pop_front();
    cv_.notify_all();
  }
}

bool SimEngine::live(const void* p, size_t n) const {
  const auto* b = static_cast<const std::byte*>(p);
  auto it = blocks_.upper_bound(b);
  if (it == blocks_.begin()) return false;
  --it;
  return it->second.live && b + n <= it->first + it->second.size;
}

size_t SimEngine::free_bytes(size_t* total) {
  std::lock_guard lock(mu_);
  size_t used = 0;
  for (const auto& [p, b] : blocks_) used += b.live ? b.size : 0;
  if (total) *total = free_ + used;
  return free_;
}

void SimEngine::set_free_bytes(size_t bytes) {
  std::lock_guard lock(mu_);
  free_ = bytes;
}

std::byte* SimEngine::allocate(size_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > free_) throw Error(where_, "cudaMalloc: out of memory (simulated)");
  free_ -= bytes;
  Block b{std::make_unique<std::byte[]>(bytes), bytes, true};
  std::byte* p = b.bytes.get();
  blocks_.emplace(p, std::move(b));
  return p;
}

// cudaFree synchronises implicitly: it returns once the device has run the work queued on
// all of its streams (the consumer's kernels, an allreduce) and then frees. Must not be
// called from a stream's own operation, which would wait for itself.
void SimEngine::deallocate(std::byte* device) noexcept {
  if (!device) return;
  std::unique_lock lock(mu_);
  if (free_waits_) cv_.wait(lock, [&] { return idle(0); });
  auto it = blocks_.find(device);
  if (it == blocks_.end() || !it->second.live) {
    faults_.push_back("freed device memory that is not allocated: " + at(device));
    return;
  }
  it->second.live = false;
  free_ += it->second.size;
}

void SimEngine::copy(std::byte* device, const std::byte* host, size_t bytes, Stream s) {
  {
    std::lock_guard lock(mu_);
    // cudaMemcpyAsync checks its arguments when called.
    if (!live(device, bytes)) {
      throw Error(where_, "cudaMemcpyAsync: invalid argument (simulated): " + at(device) +
                              " is not device memory");
    }
  }
  const Duration time =
      copy_time_ +
      (gb_per_s_ > 0 ? Duration(static_cast<int64_t>(bytes / (gb_per_s_ * 1e3))) : Duration(0));
  push(s, {time, [this, device, host, bytes] {
             std::lock_guard lock(mu_);
             if (!live(device, bytes)) {
               faults_.push_back("a copy landed in freed device memory at " + at(device));
               return;
             }
             std::memcpy(device, host, bytes);  // the source as it is now, as DMA reads it
           }});
  bool pageable = false;
  {
    std::lock_guard lock(mu_);
    pageable = pageable_;
  }
  if (pageable) synchronize(s);  // the host stages the copy: back once it is done
}

void SimEngine::record(Event e, Stream s, const char* todo) {
  auto* ev = static_cast<SimEvent*>(e);
  std::unique_lock lock(mu_);
  if (queue(s)->device != 0) {  // every event is GPU 0's
    throw Error(where_,
                "cudaEventRecord: invalid resource handle (simulated): a stream of GPU " +
                    std::to_string(queue(s)->device),
                todo);
  }
  Op op;
  op.record = ev;
  op.gen = ++ev->recorded;
  enqueue(queue(s), std::move(op));
  lock.unlock();
  cv_.notify_all();
}

void SimEngine::stream_wait(Stream s, Event e, const char*) {
  auto* ev = static_cast<SimEvent*>(e);
  std::unique_lock lock(mu_);
  Op op;
  op.wait = ev;
  op.gen = ev->recorded;  // the record in place now; later ones do not count
  enqueue(queue(s), std::move(op));
  lock.unlock();
  cv_.notify_all();
}

bool SimEngine::done(Event e) {
  std::lock_guard lock(mu_);
  const auto* ev = static_cast<SimEvent*>(e);
  return ev->completed >= ev->recorded;
}

void SimEngine::wait(Event e) {
  auto* ev = static_cast<SimEvent*>(e);
  std::unique_lock lock(mu_);
  const uint64_t gen = ev->recorded;
  cv_.wait(lock, [&] { return ev->completed >= gen; });
}

double SimEngine::elapsed_ms(Event from, Event to) {
  std::lock_guard lock(mu_);
  if (fail_elapsed_) {
    throw Error(where_, "cudaEventElapsedTime: invalid resource handle (simulated)");
  }
  const auto d = static_cast<SimEvent*>(to)->when - static_cast<SimEvent*>(from)->when;
  return std::chrono::duration<double, std::milli>(d).count();
}

void SimEngine::synchronize(Stream s) {
  std::unique_lock lock(mu_);
  Queue* q = queue(s);
  cv_.wait(lock, [&] { return q->ops.empty(); });
}

bool SimEngine::idle(int device) const {
  for (const auto& q : queues_) {
    if (q->device == device && !q->ops.empty()) return false;
  }
  return true;
}

void SimEngine::set_free_waits(bool waits) {
  std::lock_guard lock(mu_);
  free_waits_ = waits;
}

void SimEngine::synchronize_device() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] {
    for (const auto& q : queues_) {
      if (!q->ops.empty()) return false;
    }
    return true;
  });
}

void SimEngine::launch(Stream s, Duration time, std::function<void()> body) {
  push(s, {time, std::move(body)});
}

std::vector<std::byte> SimEngine::read(const void* p, size_t n) {
  std::lock_guard lock(mu_);
  if (!live(p, n)) {
    faults_.push_back("a kernel read freed device memory at " + at(p));
    return {};
  }
  const auto* b = static_cast<const std::byte*>(p);
  return {b, b + n};
}

std::vector<std::string> SimEngine::faults() {
  std::lock_guard lock(mu_);
  return faults_;
}

size_t SimEngine::live_blocks() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [p, b] : blocks_) n += b.live;
  return n;
}

}  // namespace stoker::test
