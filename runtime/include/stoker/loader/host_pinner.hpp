// The seam where batch memory gets page-locked for fast, asynchronous GPU copies.
// The loader allocates its batch arena once (NUMA-local), lets its pinned workers touch
// it first, then hands the whole arena to a HostPinner when the plan asks for pinned
// memory (plan.pin_memory, or LoaderOptions::force_pin) and one is given in
// LoaderOptions::pinner. The CUDA build provides one based on cudaHostRegister (stoker_cuda);
// the Python module one that calls torch's (python/src/py_pinner.hpp). Without one the arena
// stays ordinary pageable memory and stats().notes says so.
//
// Header only: the interface its implementations above fill.
#pragma once

#include <cstddef>
#include <string>

namespace stoker {

class HostPinner {
 public:
  virtual ~HostPinner() = default;
  // Page-locks [base, base + bytes). Returns false and fills `why` when it cannot;
  // the loader then runs on pageable memory and records `why` in its stats notes.
  virtual bool pin(void* base, size_t bytes, std::string* why) = 0;
  // Undoes pin() for the same range; called once, before the arena is freed.
  virtual void unpin(void* base, size_t bytes) noexcept = 0;
  virtual std::string describe() const = 0;  // "cudaHostRegister (GPU 0000:07:00.0)"
};

}  // namespace stoker
