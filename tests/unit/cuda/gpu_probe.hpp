// Shared by the CUDA-path unit tests: a plan naming a GPU, and whether this machine has one.
#pragma once

#include "../loader/loader_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/cuda/cuda_device.hpp"

namespace stoker::test {

inline constexpr const char* kSomeBusId = "0000:3b:00.0";

inline Plan gpu_plan(const char* bus_id) {
  Plan p = test_plan(1);
  p.gpu = bus_id;
  p.pin_memory = true;
  return p;
}

// True when CUDA sees a device (one probe; only for choosing what to assert).
inline bool machine_has_gpu() {
  try {
    return plan_gpu(gpu_plan(kSomeBusId)).usable;
  } catch (const Error&) {
    return true;  // CUDA sees devices, just not this bus id
  }
}

}  // namespace stoker::test
