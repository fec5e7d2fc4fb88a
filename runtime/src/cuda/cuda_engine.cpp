// The production copy engine: the CUDA runtime's streams, events and cudaMemcpyAsync on one
// device (copy_engine.hpp says what each call must keep).
#include <cuda_runtime.h>

#include "cuda/copy_engine.hpp"
#include "cuda/cuda_call.hpp"
#include "cuda/device_scope.hpp"

namespace stoker {
namespace {

class CudaEngine final : public CopyEngine {
 public:
  CudaEngine(int device, std::string where) : device_(device), where_(std::move(where)) {}
  const std::string& where() const override { return where_; }

  Stream create_stream() override {
    cuda::DeviceScope on(device_, where_);
    cudaStream_t s = nullptr;
    // Non-blocking: the copy stream never serialises with the legacy default stream; every
    // ordering it needs is expressed with events.
    cuda::check(cuda::counted(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)),
                "cudaStreamCreateWithFlags", where_);
    return s;
  }
  bool on_device(Stream s) override {
    const cudaStream_t cs = stream(s);
    // The special handles name a default stream of the device the caller works on (each
    // device has its own); the engine's calls, under its DeviceScope, would take ours. So
    // they are ours only when the caller works on our device: another device's default
    // stream would not be the one its kernels run on.
    if (!cs || cs == cudaStreamLegacy || cs == cudaStreamPerThread) {
      cuda::ErrorSlotScope slot;
      return cuda::current_device(where_) == device_;
    }
#if CUDART_VERSION >= 12080
    cuda::DeviceScope on(device_, where_);
    int device = -1;
    cuda::check(cuda::counted(cudaStreamGetDevice(cs, &device)), "cudaStreamGetDevice", where_,
                "pass a live cudaStream_t");
    return device == device_;
#else
    return true;  // no runtime call says it before CUDA 12.8: cudaEventRecord will fail
#endif
  }
  Event create_event(bool timing) override {
    cuda::DeviceScope on(device_, where_);
    cudaEvent_t e = nullptr;
    cuda::check(cuda::counted(cudaEventCreateWithFlags(
                    &e, timing ? cudaEventDefault : cudaEventDisableTiming)),
                "cudaEventCreateWithFlags", where_);
    return e;
  }
  void destroy_stream(Stream s) noexcept override {
    if (!s) return;
    quietly([&] { return cudaStreamDestroy(stream(s)); });
  }
  void destroy_event(Event e) noexcept override {
    if (!e) return;
    quietly([&] { return cudaEventDestroy(event(e)); });
  }

  size_t free_bytes(size_t* total) override {
    cuda::DeviceScope on(device_, where_);
    size_t free = 0;
    cuda::check(cuda::counted(cudaMemGetInfo(&free, total)), "cudaMemGetInfo", where_);
    return free;
  }
  std::byte* allocate(size_t bytes) override {
    cuda::DeviceScope on(device_, where_);
    void* p = nullptr;
    cuda::check(cuda::counted(cudaMalloc(&p, bytes)), "cudaMalloc", where_);
    return static_cast<std::byte*>(p);
  }
  void deallocate(std::byte* device) noexcept override {
    if (!device) return;
    quietly([&] { return cudaFree(device); });
  }

  void copy(std::byte* device, const std::byte* host, size_t bytes, Stream s) override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(
        cuda::counted(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream(s))),
        "cudaMemcpyAsync", where_);
  }
  void record(Event e, Stream s, const char* todo) override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(cuda::counted(cudaEventRecord(event(e), stream(s))), "cudaEventRecord", where_,
                todo);
  }
  void stream_wait(Stream s, Event e, const char* todo) override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(cuda::counted(cudaStreamWaitEvent(stream(s), event(e), 0)), "cudaStreamWaitEvent",
                where_, todo);
  }
  bool done(Event e) override {
    cuda::DeviceScope on(device_, where_);
    const cudaError_t r = cuda::counted(cudaEventQuery(event(e)));
    if (r == cudaErrorNotReady) {
      // "Not ready" is an answer, not a failure, yet the runtime leaves it in the thread's
      // last-error slot, where the application's next launch check (torch's) would find it:
      // cleared, unless the slot held the application's own error (cuda_call.hpp).
      cuda::clear_own_error();
      return false;
    }
    cuda::check(r, "cudaEventQuery", where_);
    return true;
  }
  void wait(Event e) override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(cuda::counted(cudaEventSynchronize(event(e))), "cudaEventSynchronize", where_);
  }
  double elapsed_ms(Event from, Event to) override {
    cuda::DeviceScope on(device_, where_);
    float ms = 0;
    cuda::check(cuda::counted(cudaEventElapsedTime(&ms, event(from), event(to))),
                "cudaEventElapsedTime", where_);
    return ms;
  }
  void synchronize(Stream s) override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(cuda::counted(cudaStreamSynchronize(stream(s))), "cudaStreamSynchronize", where_);
  }
  void synchronize_device() override {
    cuda::DeviceScope on(device_, where_);
    cuda::check(cuda::counted(cudaDeviceSynchronize()), "cudaDeviceSynchronize", where_);
  }

 private:
  static cudaStream_t stream(Stream s) {
    return static_cast<cudaStream_t>(s);
  }
  static cudaEvent_t event(Event e) {
    return static_cast<cudaEvent_t>(e);
  }
  // For the calls of destructors: on our device, errors dropped (and not left behind in
  // the thread's last-error slot, where the application's next check would find them).
  template <class Call>
  void quietly(Call call) noexcept {
    try {
      cuda::DeviceScope on(device_, where_);
      if (cuda::counted(call()) != cudaSuccess) cuda::clear_own_error();
    } catch (...) {
    }
  }

  const int device_;
  const std::string where_;
};

}  // namespace

std::shared_ptr<CopyEngine> make_cuda_engine(int device, std::string where) {
  return std::make_shared<CudaEngine>(device, std::move(where));
}

}  // namespace stoker
