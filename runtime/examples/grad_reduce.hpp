// Averages the gradients of all ranks: NCCL on GPUs (its communicator bootstrapped with a
// unique id broadcast over MPI), MPI_Allreduce on the CPU, nothing for a single rank.
// Also the few scalar reductions the trainer reports (mean loss, worst wait share).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "math_ops.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker::train {

class GradReducer {
 public:
  virtual ~GradReducer() = default;
  virtual std::string describe() const = 0;  // "MPI_Allreduce over 4 ranks"
  // grads[i] = mean over ranks of grads[i]; `grads` lives in the backend's memory.
  virtual void mean(float* grads, size_t n) = 0;
  // Throws when a reduction already queued can never complete (a peer failed): called
  // while the host waits for the GPU (MathOps::set_wait_check).
  virtual void check() {}
  // Ends the reductions in flight (ncclCommAbort) so that nothing waits for them any more:
  // on an error, before the GPU's queued work is waited for.
  virtual void abort() {}
};

// Where the gradients live and how they may be reduced.
struct ReduceTarget {
  MathOps* ops = nullptr;
  bool on_gpu = false;
  void* stream = nullptr;  // cudaStream_t of the GPU work
};

// Throws stoker::Error naming this rank and the cause when the world needs MPI but the
// process was not launched under it, when NCCL's initialisation fails, or when some ranks
// train on a GPU and others on the CPU (every rank says so, none waits for the others).
std::unique_ptr<GradReducer> make_grad_reducer(const World& world, const ReduceTarget& t);

// Scalar reductions over MPI_COMM_WORLD (identity for a single rank / without MPI).
double mean_over_ranks(const World& world, double v);
double max_over_ranks(const World& world, double v);
// Stops every rank (MPI_Abort) when one fails under MPI, so no rank waits forever in a
// collective; returns normally without MPI.
void abort_world(const World& world, int code);
// Whether abort_world() stops the world (several ranks under MPI).
bool world_abortable(const World& world);
// Prints `e` as the trainer's error line, then abort_world(world, 2).
void fail(const World& world, const std::exception& e);

}  // namespace stoker::train
