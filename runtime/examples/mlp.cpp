#include "mlp.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "stoker/common/error.hpp"

namespace stoker::train {

size_t MlpShape::params() const {
  const size_t i = inputs, h = hidden, c = classes;
  return hidden ? h * i + h + c * h + c : c * i + c;
}

std::string MlpShape::describe() const {
  if (!hidden) {
    return "softmax regression " + std::to_string(inputs) + "-" + std::to_string(classes);
  }
  return "mlp " + std::to_string(inputs) + "-" + std::to_string(hidden) + "-" +
         std::to_string(classes);
}

Mlp::Mlp(MathOps& ops, MlpShape shape, int max_batch, uint64_t seed)
    : ops_(ops), shape_(shape), max_batch_(max_batch) {
  std::vector<float> init(size(), 0.0f);
  std::mt19937_64 rng(seed);
  auto fill = [&](size_t offset, size_t count, int fan_in) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
    for (size_t k = 0; k < count; ++k) init[offset + k] = u(rng) * scale;
  };
  const size_t in = shape_.inputs, h = shape_.hidden, c = shape_.classes;
  if (h) {
    fill(0, h * in, shape_.inputs);          // W1, biases stay 0
    fill(h * in + h, c * h, shape_.hidden);  // W2
    hidden_ = ops_.alloc(static_cast<size_t>(max_batch) * h);
    dhidden_ = ops_.alloc(static_cast<size_t>(max_batch) * h);
  } else {
    fill(0, c * in, shape_.inputs);
  }
  params_ = ops_.alloc(size());
  grads_ = ops_.alloc(size());
  logits_ = ops_.alloc(static_cast<size_t>(max_batch) * c);
  dlogits_ = ops_.alloc(static_cast<size_t>(max_batch) * c);
  ops_.upload(params_, init.data(), init.size());
}

Mlp::~Mlp() {
  for (float* p : {params_, grads_, hidden_, dhidden_, logits_, dlogits_}) {
    if (p) ops_.free(p);
  }
}

float Mlp::forward_backward(const float* x, const int64_t* targets, int n) {
  // The activation buffers hold max_batch rows: a larger batch would write past them.
  if (n < 0 || n > max_batch_) {
    throw Error("the model's batch",
                std::to_string(n) + " rows, more than the " + std::to_string(max_batch_) +
                    " it was sized for",
                "create the model with the loader's batch size");
  }
  const int D = shape_.inputs, H = shape_.hidden, C = shape_.classes;
  if (!H) {
    float* w = params_;
    float* b = params_ + static_cast<size_t>(C) * D;
    ops_.gemm(n, C, D, x, D, 1, w, 1, D, logits_, false);  // logits = x W^T
    ops_.bias_act(logits_, b, n, C, false);
    const float loss = ops_.softmax_xent(logits_, targets, n, C, dlogits_);
    ops_.gemm(C, D, n, dlogits_, 1, C, x, D, 1, grads_, false);  // dW = dlogits^T x
    ops_.column_sums(dlogits_, n, C, grads_ + static_cast<size_t>(C) * D);
    return loss;
  }
  const size_t w1 = 0, b1 = w1 + static_cast<size_t>(H) * D, w2 = b1 + H,
               b2 = w2 + static_cast<size_t>(C) * H;
  ops_.gemm(n, H, D, x, D, 1, params_ + w1, 1, D, hidden_, false);  // h = relu(x W1^T + b1)
  ops_.bias_act(hidden_, params_ + b1, n, H, true);
  ops_.gemm(n, C, H, hidden_, H, 1, params_ + w2, 1, H, logits_, false);  // logits = h W2^T + b2
  ops_.bias_act(logits_, params_ + b2, n, C, false);
  const float loss = ops_.softmax_xent(logits_, targets, n, C, dlogits_);
  ops_.gemm(C, H, n, dlogits_, 1, C, hidden_, H, 1, grads_ + w2, false);  // dW2 = dlogits^T h
  ops_.column_sums(dlogits_, n, C, grads_ + b2);
  ops_.gemm(n, H, C, dlogits_, C, 1, params_ + w2, H, 1, dhidden_, false);  // dh = dlogits W2
  ops_.relu_backward(dhidden_, hidden_, static_cast<size_t>(n) * H);
  ops_.gemm(H, D, n, dhidden_, 1, H, x, D, 1, grads_ + w1, false);  // dW1 = dh^T x
  ops_.column_sums(dhidden_, n, H, grads_ + b1);
  return loss;
}

}  // namespace stoker::train
