// One step's input, wherever it lives: the loader's host batch on the CPU path, or the
// device feeder's GPU copy on the GPU path. The training loop is the same for both.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "stoker/loader/loader.hpp"

namespace stoker::train {

struct StepBatch {
  const void* data = nullptr;       // samples (host or device memory)
  const int64_t* labels = nullptr;  // same memory as data
  int size = 0;
};

class StepInput {
 public:
  virtual ~StepInput() = default;
  // The next batch of the loader's current epoch (blocking while none is ready), or
  // nullopt at its end. The previous batch must have been done().
  virtual std::optional<StepBatch> next() = 0;
  // The step's work on the batch is queued (CPU: finished): its memory may be reused.
  virtual void done() = 0;
};

std::unique_ptr<StepInput> host_input(Loader& loader);
#if STOKER_HAVE_CUDA
// Feeds `loader` to its plan's GPU; work on `stream` (cudaStream_t) waits for each copy.
std::unique_ptr<StepInput> device_input(Loader& loader, void* stream);
#endif

}  // namespace stoker::train
