#include "sim_devices.hpp"

#if STOKER_HAVE_CUDA
#include <atomic>
#include <stdexcept>
#include <utility>

namespace stoker::test {

namespace {
SimDevices* g_installed = nullptr;
std::atomic<uint64_t> g_generations{0};
struct ThreadChoice {
  uint64_t generation = 0;
  int device = -1;
};
thread_local ThreadChoice t_choice;
}  // namespace

SimDevices::SimDevices(int count, bool cuda12)
    : count_(count), generation_(++g_generations), contexts_(count, false) {
  saved_ = cuda::device_calls();
  cuda::device_calls() = {get_device, set_device, context_active, cuda12};
  g_installed = this;
}

SimDevices::~SimDevices() {
  cuda::device_calls() = saved_;
  g_installed = nullptr;
}

int& SimDevices::thread_device() {
  if (t_choice.generation != generation_) t_choice = {generation_, -1};
  return t_choice.device;
}

cudaError_t SimDevices::get_device(int* device) {
  const int chosen = g_installed->thread_device();
  *device = chosen < 0 ? 0 : chosen;
  return cudaSuccess;
}

cudaError_t SimDevices::set_device(int device) {
  SimDevices& d = *g_installed;
  std::lock_guard lock(d.mu_);
  d.sets_.push_back(device);
  if (device < 0 || device >= d.count_) return cudaErrorInvalidDevice;
  d.thread_device() = device;
  if (cuda::device_calls().set_creates_context) d.contexts_[device] = true;
  return cudaSuccess;
}

bool SimDevices::context_active(int device) {
  std::lock_guard lock(g_installed->mu_);
  return g_installed->contexts_.at(device);
}

void SimDevices::set(int device) {
  if (set_device(device) != cudaSuccess) throw std::invalid_argument("no such device");
}

int SimDevices::current() {
  int device = -1;
  get_device(&device);
  return device;
}

void SimDevices::use() {
  const int device = current();
  std::lock_guard lock(mu_);
  contexts_[device] = true;
}

bool SimDevices::context(int device) {
  return context_active(device);
}

std::vector<int> SimDevices::take_sets() {
  std::lock_guard lock(mu_);
  return std::exchange(sets_, {});
}

}  // namespace stoker::test
#endif  // STOKER_HAVE_CUDA
