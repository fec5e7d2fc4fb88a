// The trainer's model: a 2-layer MLP (inputs -> hidden, ReLU -> classes) with softmax
// cross-entropy, or softmax regression when hidden is 0. Parameters and gradients are each
// one flat buffer in the backend's memory, so one allreduce averages all gradients.
#pragma once

#include <cstdint>
#include <string>

#include "math_ops.hpp"

namespace stoker::train {

struct MlpShape {
  int inputs = 0, hidden = 0, classes = 0;
  size_t params() const;         // total parameter count
  std::string describe() const;  // "mlp 3072-64-10" or "softmax regression 3072-10"
};

class Mlp {
 public:
  // Initialised from `seed` alone (uniform +-1/sqrt(fan_in)): every rank starts identical.
  Mlp(MathOps& ops, MlpShape shape, int max_batch, uint64_t seed);
  ~Mlp();
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  // Forward and backward on x[n x inputs] with class targets (both in the backend's memory);
  // leaves d(mean loss)/d(params) in grads() and returns the mean loss. n <= max_batch.
  float forward_backward(const float* x, const int64_t* targets, int n);
  float* grads() { return grads_; }
  size_t size() const { return shape_.params(); }
  void step(float lr) { ops_.sgd(params_, grads_, size(), lr); }

 private:
  MathOps& ops_;
  MlpShape shape_;
  int max_batch_;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  float* hidden_ = nullptr;  // [max_batch x hidden] activations, then their gradient
  float* dhidden_ = nullptr;
  float* logits_ = nullptr;  // [max_batch x classes]
  float* dlogits_ = nullptr;
};

}  // namespace stoker::train
