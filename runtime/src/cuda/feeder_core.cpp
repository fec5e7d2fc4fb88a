#include "cuda/feeder_core.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "stoker/common/error.hpp"

namespace stoker {

namespace {
constexpr size_t kDeviceAlign = 256;  // cudaMalloc's own alignment; keeps labels aligned
size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}
}  // namespace

FeederCore::FeederCore(std::shared_ptr<CopyEngine> engine, FeederStats stats, bool timing,
                       SampleSpec spec)
    : engine_(std::move(engine)),
      timing_(timing),
      spec_(std::make_shared<const SampleSpec>(std::move(spec))),
      buffers_(stats.depth),
      queue_(stats.depth),
      stats_(std::move(stats)) {
  // A throwing constructor runs no destructor: what was created so far is destroyed here.
  try {
    stream_ = engine_->create_stream();
    for (Buffer& b : buffers_) {
      b.copied = engine_->create_event(timing_);
      b.consumed.push_back(engine_->create_event(false));
      if (timing_) b.start = engine_->create_event(true);
    }
  } catch (...) {
    destroy_handles();
    throw;
  }
}

void FeederCore::destroy_handles() noexcept {
  for (Buffer& b : buffers_) {
    for (CopyEngine::Event e : {b.start, b.copied}) engine_->destroy_event(e);
    for (CopyEngine::Event e : b.consumed) engine_->destroy_event(e);
  }
  engine_->destroy_stream(stream_);
}

FeederCore::~FeederCore() {
  // Destructors may run on any thread with any current device: the engine sets ours.
  // Ordering rule: a buffer is freed only after every read of it, the consumer's kernels
  // included. The copy stream alone does not know them: they end at each buffer's release
  // point (`consumed`), or, for a buffer whose release failed, somewhere on the device.
  try {
    bool unknown = false;
    for (Buffer& b : buffers_) {
      for (size_t i = 0; i < b.consumed_pending; ++i) engine_->wait(b.consumed[i]);
      unknown |= b.held;
    }
    if (unknown) engine_->synchronize_device();
    if (stream_) engine_->synchronize(stream_);
  } catch (...) {
  }
  for (Buffer& b : buffers_) {
    b.host.reset();
    engine_->deallocate(b.device);
  }
  destroy_handles();
}

// All buffers or none, and capacity_ set only once they exist: a caller that frees GPU
// memory and calls next() again gets a fresh attempt, not copies into null buffers.
void FeederCore::allocate(size_t capacity) {
  const size_t labels_offset = round_up(capacity * spec_->bytes(), kDeviceAlign);
  const size_t bytes = labels_offset + capacity * sizeof(int64_t);
  size_t total_bytes = 0;
  const size_t free_bytes = engine_->free_bytes(&total_bytes);
  if (bytes * buffers_.size() > free_bytes) {
    throw Error(where(),
                "no room for " + std::to_string(buffers_.size()) + " device buffers of " +
                    std::to_string(bytes) + " bytes: " + std::to_string(free_bytes) +
                    " bytes free of " + std::to_string(total_bytes),
                "use a smaller batch or a lower feeder depth");
  }
  try {
    for (Buffer& b : buffers_) b.device = engine_->allocate(bytes);
  } catch (...) {
    for (Buffer& b : buffers_) engine_->deallocate(std::exchange(b.device, nullptr));
    throw;
  }
  capacity_ = capacity;
  labels_offset_ = labels_offset;
  stats_.buffer_bytes = bytes;
}

// The slot goes back first: the copy is done, whatever its timing says. A time that cannot
// be read leaves the copy untimed (outside timed_bytes) rather than failing the batch: had
// it thrown, the slot would stay held and every later next() would throw the same error.
// A broken device still fails the next call that matters (a copy, a query).
void FeederCore::finish_copy(Buffer& buf) {
  buf.host.reset();  // the slot goes back to the loader's pool
  if (!timing_) return;
  try {
    const double ms = engine_->elapsed_ms(buf.start, buf.copied);
    stats_.h2d_ns += static_cast<uint64_t>(ms * 1e6);
    stats_.timed_bytes += buf.copy_bytes;
  } catch (const Error&) {
  }
}

void FeederCore::reap() {
  std::lock_guard lock(mu_);
  for (Buffer& b : buffers_) {
    if (b.host && engine_->done(b.copied)) finish_copy(b);
  }
}

void FeederCore::drain() {
  std::lock_guard lock(mu_);
  for (Buffer& b : buffers_) {
    if (!b.host) continue;
    engine_->wait(b.copied);
    finish_copy(b);
  }
}

// Ordering rule: a host slot is read by its copy until the copy's event has completed
// (cudaMemcpyAsync returns before the DMA), so a buffer whose last copy is still in flight is
// not free: reusing it would return that slot to the loader, whose workers refill it under
// the copy. Only reap() or a wait for the event (finish_copy) frees it.
int FeederCore::free_buffer() {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (!b.queued && !b.held && !b.host) return static_cast<int>(i);
  }
  return -1;
}

int FeederCore::await_released_buffer() {
  std::lock_guard lock(mu_);
  Buffer* oldest = nullptr;
  for (Buffer& b : buffers_) {
    if (!b.queued && !b.held && b.host && (!oldest || b.issued < oldest->issued)) oldest = &b;
  }
  if (!oldest) return -1;  // the consumer holds every buffer
  engine_->wait(oldest->copied);
  finish_copy(*oldest);
  return static_cast<int>(oldest - buffers_.data());
}

bool FeederCore::queue_empty() {
  std::lock_guard lock(mu_);
  return queued_ == 0;
}

void FeederCore::issue(int index, Batch&& host) {
  std::lock_guard lock(mu_);
  if (host.label_classes() != 0) {  // its labels() is null: there is no int64 to copy
    throw Error(where(),
                "a batch with mixed targets (float32 rows of " +
                    std::to_string(host.label_classes()) +
                    " classes: mixup_alpha, cutmix_alpha) reached the feeder, which copies "
                    "int64 labels only",
                "copy such batches yourself (Batch::label_data()), or through Python's "
                "stoker.Loader(to_device=...)");
  }
  if (capacity_ == 0) allocate(host.capacity());
  if (host.capacity() != capacity_) {
    throw Error(where(),
                "batch of capacity " + std::to_string(host.capacity()) + " after batches of " +
                    std::to_string(capacity_),
                "feed one loader (one batch size) per DeviceFeeder");
  }
  Buffer& b = buffers_[index];
  if (b.host) {  // never while the slot's copy may run (see free_buffer): wait for it first
    engine_->wait(b.copied);
    finish_copy(b);
  }
  // The consumer's kernels that read this buffer, on every stream, must be done before it
  // is overwritten.
  for (size_t i = 0; i < b.consumed_pending; ++i) engine_->stream_wait(stream_, b.consumed[i]);
  b.consumed_pending = 0;
  if (timing_) engine_->record(b.start, stream_);
  const size_t data_bytes = host.bytes(), label_bytes = host.size() * sizeof(int64_t);
  if (data_bytes) engine_->copy(b.device, host.data(), data_bytes, stream_);
  if (label_bytes) {
    engine_->copy(b.device + labels_offset_, reinterpret_cast<const std::byte*>(host.labels()),
                  label_bytes, stream_);
  }
  engine_->record(b.copied, stream_);
  b.copy_bytes = data_bytes + label_bytes;
  b.size = host.size();
  b.epoch = host.epoch();
  b.number = host.number();
  b.host = std::move(host);
  b.issued = ++issued_;
  b.queued = true;
  queue_[(head_ + queued_) % queue_.size()] = index;
  ++queued_;
  stats_.bytes += b.copy_bytes;
}

HandedBatch FeederCore::hand_out() {
  std::lock_guard lock(mu_);
  const int index = queue_[head_];
  head_ = (head_ + 1) % queue_.size();
  --queued_;
  Buffer& b = buffers_[index];
  b.queued = false;
  b.held = true;
  b.read_on.clear();
  ++stats_.batches;
  return {index,   b.device, reinterpret_cast<const int64_t*>(b.device + labels_offset_),
          spec_,   b.size,   capacity_,
          b.epoch, b.number};
}

std::optional<HandedBatch> FeederCore::next(Loader& loader) {
  using clock = std::chrono::steady_clock;
  reap();
  // Keep free buffers busy with batches the loader already has: their copies overlap the
  // consumer's work on this one. Wait for the loader only when no copied batch is queued,
  // and for a released buffer's copy only when nothing else is left to hand out.
  while (!exhausted_) {
    int b = free_buffer();
    if (b < 0 && queue_empty()) b = await_released_buffer();
    if (b < 0) break;
    if (!queue_empty() && !loader.next_ready()) break;
    std::optional<Batch> host = std::exchange(unissued_, std::nullopt);
    if (!host) {
      const auto t0 = clock::now();
      host = loader.next();
      add_input_wait(
          std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
    }
    if (!host) {
      exhausted_ = true;
      break;
    }
    try {
      issue(b, std::move(*host));
    } catch (...) {
      // Kept for the next call (a failed allocation the caller may make room for): the
      // loader has counted it as taken, so dropping it would lose it from the epoch.
      if (*host) unissued_ = std::move(host);
      throw;
    }
  }
  if (queue_empty()) {
    if (!exhausted_) {
      throw Error("DeviceFeeder::next",
                  "the consumer holds all " + std::to_string(depth()) + " device buffers",
                  "release() a DeviceBatch before asking for the next one, or use a deeper feeder");
    }
    drain();  // epoch end: every host slot back to the loader
    exhausted_ = false;
    return std::nullopt;
  }
  return hand_out();
}

namespace {
constexpr const char* kOwnGpu = "pass a stream of the batch's GPU";
}

// Refused before anything is queued: a wait across GPUs is valid CUDA, but the release
// point must later be recorded on this stream, which cudaEventRecord refuses for another
// GPU's, and the buffer would then be lost to the feeder.
void FeederCore::wait_on(int index, void* consumer_stream) {
  std::lock_guard lock(mu_);
  if (!engine_->on_device(consumer_stream)) {
    throw Error(where(), "wait_on() was given a stream of another GPU", kOwnGpu);
  }
  Buffer& b = buffers_[index];
  engine_->stream_wait(consumer_stream, b.copied, kOwnGpu);
  // Every stream the batch is read on orders the buffer's reuse (release() records on each).
  if (std::find(b.read_on.begin(), b.read_on.end(), consumer_stream) == b.read_on.end()) {
    b.read_on.push_back(consumer_stream);
  }
}

void FeederCore::synchronize(int b) {
  engine_->wait(buffers_[b].copied);
}

// Ordering rule: the next copy into the buffer waits for `consumed`, so `consumed` must be
// recorded on the stream whose kernels read the batch. The legacy default stream is not
// ordered with non-blocking streams (the trainer's, torch's side streams), so without a
// stream the release points are the streams given to wait_on(); without those, the
// feeder cannot know where the batch was read and waits for the device's queued work.
// A batch read on several streams (a compute and a side stream) has a release point on each:
// the next copy waits for all of them, not for the last stream alone. The buffer is given
// back only once every point is recorded, so a release that throws can be made again.
void FeederCore::release(int index, void* consumer_stream) {
  std::lock_guard lock(mu_);
  Buffer& b = buffers_[index];
  std::vector<void*> streams = b.read_on;
  if (consumer_stream &&
      std::find(streams.begin(), streams.end(), consumer_stream) == streams.end()) {
    if (!engine_->on_device(consumer_stream)) {
      throw Error(where(), "release() was given a stream of another GPU",
                  "release a DeviceBatch with a stream of its GPU");
    }
    streams.push_back(consumer_stream);
  }
  if (streams.empty()) {
    engine_->synchronize_device();
    b.consumed_pending = 0;
    b.held = false;
    return;
  }
  while (b.consumed.size() < streams.size()) b.consumed.push_back(engine_->create_event(false));
  for (size_t i = 0; i < streams.size(); ++i) {
    engine_->record(b.consumed[i], streams[i], "release a DeviceBatch with a stream of its GPU");
  }
  b.consumed_pending = streams.size();
  b.held = false;
}

void FeederCore::release_after_device(int index) {
  std::lock_guard lock(mu_);
  engine_->synchronize_device();
  buffers_[index].consumed_pending = 0;
  buffers_[index].held = false;
}

void FeederCore::add_input_wait(uint64_t ns) {
  std::lock_guard lock(mu_);
  stats_.input_wait_ns += ns;
}

FeederStats FeederCore::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace stoker
