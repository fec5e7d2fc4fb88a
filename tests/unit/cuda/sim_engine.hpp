// A simulated copy engine for the device feeder's unit tests (tests only, never shipped): it
// stands in for a GPU, which this project's machines do not have, and keeps the CUDA
// semantics copy_engine.hpp lists. What makes it useful is what a GPU does and a test on the
// host usually does not:
//   - each stream is its own thread, so copies, "kernels" and the host run concurrently and
//     complete later than they were queued;
//   - a copy reads its source when it completes, as DMA does: a host slot refilled before
//     then lands on the device;
//   - the legacy default stream (nullptr, or the handle cudaStreamLegacy) is one more
//     stream, not ordered with the non-blocking streams (the feeder's, a test's consumer)
//     but with the blocking ones, as CUDA's is: work on it waits for theirs queued before,
//     theirs for its; cudaStreamPerThread names a blocking stream of the calling thread;
//   - device memory is checked: a copy or a kernel that touches memory already freed (or
//     never allocated) is recorded as a fault instead of being done;
//   - the engine is GPU 0 of several: a test may make streams of another GPU, on which an
//     event of GPU 0 cannot be recorded (cudaEventRecord's rule), though they may wait for
//     one;
//   - a copy takes a fixed time plus its bytes at a rate, if one is given; copies from
//     pageable memory (set_pageable) return only once done, as cudaMemcpyAsync stages them;
//   - deallocate() first waits for the work queued on every stream of GPU 0, as cudaFree
//     does (its implicit synchronisation); set_free_waits(false) frees at once instead, as
//     cudaFreeAsync or a pool's free would, so that a test holds the feeder to its own
//     ordering rules rather than to cudaFree's wait;
//   - faults on demand: the n-th event creation fails, event timings cannot be read; and
//     every stream and event destroyed is counted, so leaks show.
// The test's "kernels" are launch()ed on a stream and read device memory with read().
// Not here: the caller's current device. The special handles resolve to GPU 0's default
// streams, as they do for a caller working on GPU 0; the current device and the primary
// contexts are simulated apart, for DeviceScope and the CUDA engine (sim_devices.hpp), and
// the thread's last-error slot in cuda_call_error_slot_test.cpp.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/copy_engine.hpp"

namespace stoker::test {

class SimEngine final : public CopyEngine {
 public:
  using Duration = std::chrono::microseconds;
  // Every copy takes `copy_time` once its stream reaches it.
  // Every copy takes `copy_time`, plus its bytes at `gb_per_s` (1e9 bytes/s) when not 0.
  explicit SimEngine(Duration copy_time, double gb_per_s = 0);
  ~SimEngine() override;  // runs what is still queued, then joins its threads

  const std::string& where() const override { return where_; }
  Stream create_stream() override;
  bool on_device(Stream s) override;
  Event create_event(bool timing) override;
  void destroy_stream(Stream s) noexcept override;
  void destroy_event(Event e) noexcept override;  // counted; kept: an operation may name it
  size_t free_bytes(size_t* total) override;
  std::byte* allocate(size_t bytes) override;
  void deallocate(std::byte* device) noexcept override;
  void copy(std::byte* device, const std::byte* host, size_t bytes, Stream s) override;
  void record(Event e, Stream s, const char* todo = "") override;
  void stream_wait(Stream s, Event e, const char* todo = "") override;
  bool done(Event e) override;
  void wait(Event e) override;
  double elapsed_ms(Event from, Event to) override;
  void synchronize(Stream s) override;
  void synchronize_device() override;

  // A kernel on `s`: runs after the work queued on `s` before it, takes `time`, then calls
  // `body`, whose read()s stand for the kernel's reads of device memory.
  void launch(Stream s, Duration time, std::function<void()> body);
  // Device bytes [p, p + n) as they are now; empty, and a fault, outside live memory.
  std::vector<std::byte> read(const void* p, size_t n);
  // What free_bytes() says from now on (allocate() beyond it fails as cudaMalloc would).
  void set_free_bytes(size_t bytes);
  std::vector<std::string> faults();  // device memory used while not allocated
  size_t live_blocks();               // device allocations not freed

  // A stream of another GPU of the same machine (the engine's own is GPU 0).
  Stream create_stream_on(int device);
  Stream create_blocking_stream();  // cudaStreamCreate's: ordered with the legacy stream
  // CUDA's special handles, by value (cuda_runtime.h: cudaStreamLegacy, cudaStreamPerThread).
  static Stream legacy_handle() { return reinterpret_cast<Stream>(uintptr_t{1}); }
  static Stream per_thread_handle() { return reinterpret_cast<Stream>(uintptr_t{2}); }
  // The next `after` event creations succeed, the one after them throws (-1: none fails).
  void fail_create_event_after(int after);
  void fail_elapsed(bool fail);      // elapsed_ms() throws, as for events without timing
  void set_pageable(bool pageable);  // copy() blocks the host until the copy is done
  void set_free_waits(bool waits);   // deallocate() waits for the device first (default)
  size_t live_handles();  // streams (the legacy default one aside) and events not destroyed

 private:
  using Clock = std::chrono::steady_clock;
  struct SimEvent {
    uint64_t recorded = 0, completed = 0;  // generations: done when completed >= recorded
    Clock::time_point when{};              // when the last completed record ran
    bool destroyed = false;
  };
  struct Op {
    Duration time{0};
    std::function<void()> body;  // run at the end of `time`, without the engine's lock
    SimEvent* wait = nullptr;    // stream_wait: blocks the stream until `wait` reaches `gen`
    SimEvent* record = nullptr;  // record: `record` reaches `gen`
    uint64_t gen = 0;
  };
  struct Queue {
    std::deque<Op> ops;  // the front one is running
    bool closed = false;
    int device = 0;
    bool blocking = false;  // ordered with the legacy default stream
    std::thread thread;
  };
  struct Block {
    std::unique_ptr<std::byte[]> bytes;
    size_t size = 0;
    bool live = true;
  };
  Queue* queue(Stream s);                       // under mu_; resolves the special handles
  Queue* new_queue(int device, bool blocking);  // under mu_
  // Under mu_: queues `op` on `q` after the implicit waits of the legacy stream's rules.
  void enqueue(Queue* q, Op op);
  void order_after(Queue* waiter, Queue* q);  // under mu_: waiter waits for q's work so far
  void push(Stream s, Op op);
  void run(Queue* q);
  bool live(const void* p, size_t n) const;  // under mu_
  bool idle(int device) const;               // under mu_: no stream of `device` has work
  void stop() noexcept;

  const Duration copy_time_;
  const double gb_per_s_;
  const std::string where_ = "simulated GPU";
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Queue>> queues_;  // [0]: the legacy default stream
  std::vector<std::unique_ptr<SimEvent>> events_;
  std::map<std::thread::id, Queue*> per_thread_;  // cudaStreamPerThread of each thread
  std::map<const std::byte*, Block> blocks_;      // freed ones stay, so no address is reused
  size_t free_ = size_t{1} << 30;
  std::vector<std::string> faults_;
  int create_event_budget_ = -1;  // event creations left before one fails; -1: no limit
  bool fail_elapsed_ = false;
  bool pageable_ = false;
  bool free_waits_ = true;
};

}  // namespace stoker::test
