#include "stoker/cuda/cuda_device.hpp"

#include <atomic>
#include <mutex>

#include "cuda/cuda_call.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace cuda {
namespace {
std::atomic<uint64_t> g_calls{0};
thread_local int t_scopes = 0;          // ErrorSlotScopes open on this thread
thread_local bool t_app_error = false;  // the slot held an error as the outermost began
}  // namespace

ErrorSlotCalls& error_slot_calls() {
  static ErrorSlotCalls calls{cudaPeekAtLastError, cudaGetLastError};
  return calls;
}

ErrorSlotScope::ErrorSlotScope() {
  if (t_scopes++ == 0) t_app_error = counted(error_slot_calls().peek()) != cudaSuccess;
}

ErrorSlotScope::~ErrorSlotScope() {
  --t_scopes;
}

void clear_own_error() {
  if (t_scopes > 0 && t_app_error) return;
  counted(error_slot_calls().get());
}

cudaError_t counted(cudaError_t result) {
  g_calls.fetch_add(1, std::memory_order_relaxed);
  return result;
}

std::string describe(const char* call, cudaError_t result) {
  return std::string(call) + ": " + cudaGetErrorString(result) + " (" + cudaGetErrorName(result) +
         ")";
}

void check(cudaError_t result, const char* call, const std::string& where,
           const std::string& todo) {
  if (result == cudaSuccess) return;
  clear_own_error();
  throw Error(where, describe(call, result), todo);
}

}  // namespace cuda

namespace {

// The process-wide probe, done once: how many devices CUDA sees, or why none.
struct Probe {
  int devices = 0;
  std::string why;
};

const Probe& probe() {
  static Probe p;
  static std::once_flag once;
  std::call_once(once, [] {
    cuda::ErrorSlotScope slot;
    int n = 0;
    cudaError_t e = cuda::counted(cudaGetDeviceCount(&n));
    if (e != cudaSuccess) {
      cuda::clear_own_error();
      p.why = "no usable GPU: " + cuda::describe("cudaGetDeviceCount", e);
    } else if (n == 0) {
      p.why = "no usable GPU: the CUDA runtime sees no device";
    } else {
      p.devices = n;
    }
  });
  return p;
}

std::string visible_bus_ids(int devices) {
  std::string out;
  for (int d = 0; d < devices; ++d) {
    char id[32] = {};
    if (cuda::counted(cudaDeviceGetPCIBusId(id, sizeof id, d)) != cudaSuccess) continue;
    out += (out.empty() ? "" : ", ") + std::string(id);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

uint64_t cuda_calls() {
  return cuda::g_calls.load(std::memory_order_relaxed);
}

GpuAvailability plan_gpu(const Plan& plan) {
  if (plan.gpu.empty()) return {false, -1, "the plan names no GPU"};
  const Probe& p = probe();
  if (p.devices == 0) return {false, -1, p.why};
  int device = -1;
  cuda::ErrorSlotScope slot;
  cudaError_t e = cuda::counted(cudaDeviceGetByPCIBusId(&device, plan.gpu.c_str()));
  if (e != cudaSuccess) {
    cuda::clear_own_error();
    throw Error("STOKER_GPU=" + plan.gpu,
                "the plan's GPU is not visible to this process; CUDA sees " +
                    std::to_string(p.devices) + " device(s): " + visible_bus_ids(p.devices),
                "request the GPU for the task (--gpus-per-task / --gpus-per-node), check "
                "CUDA_VISIBLE_DEVICES, or let stoker plan again without STOKER_GPU");
  }
  return {true, device, ""};
}

}  // namespace stoker
