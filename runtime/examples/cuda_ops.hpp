// The GPU backend of MathOps: simple CUDA kernels (a tiled GEMM and element-wise ones),
// all queued on one stream, the one the device feeder's batches are waited on.
#pragma once

#if STOKER_HAVE_CUDA
#include <memory>
#include <string>

#include "math_ops.hpp"

namespace stoker::train {

// Works on CUDA device `device` (current for the calling thread) and `stream`
// (a cudaStream_t). Throws stoker::Error naming `gpu` on a CUDA failure.
std::unique_ptr<MathOps> make_cuda_ops(int device, const std::string& gpu, void* stream);

}  // namespace stoker::train
#endif
