// The handful of dense operations the example trainer needs, behind one interface so the
// model's forward/backward pass is written once and runs on the CPU or on a GPU.
// Every pointer lives in the backend's memory (host for CpuOps, device for CudaOps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace stoker::train {

class MathOps {
 public:
  virtual ~MathOps() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda 0000:07:00.0"

  virtual float* alloc(size_t floats) = 0;
  virtual void free(float* p) = 0;
  virtual void upload(float* dst, const float* host, size_t floats) = 0;
  virtual void download(float* host, const float* src, size_t floats) = 0;
  virtual int64_t* alloc_i64(size_t n) = 0;
  virtual void free_i64(int64_t* p) = 0;

  // c[M x N] (+)= A * B where A(m, k) = a[m*a_m + k*a_k] and B(k, n) = b[k*b_k + n*b_n]:
  // the strides express the transposes of the backward pass without copies.
  virtual void gemm(int M, int N, int K, const float* a, long a_m, long a_k, const float* b,
                    long b_k, long b_n, float* c, bool accumulate) = 0;
  // x[r][c] += bias[c], then max(0, .) when relu.
  virtual void bias_act(float* x, const float* bias, int rows, int cols, bool relu) = 0;
  // Softmax cross-entropy of each row against targets[r] (class index, taken modulo
  // cols); writes d(mean loss)/d(logits) and returns the mean loss (waits for the result).
  virtual float softmax_xent(const float* logits, const int64_t* targets, int rows, int cols,
                             float* dlogits) = 0;
  virtual void column_sums(const float* x, int rows, int cols, float* out) = 0;
  // d[i] = 0 where h[i] <= 0 (the ReLU's gradient).
  virtual void relu_backward(float* d, const float* h, size_t n) = 0;
  // p -= lr * g
  virtual void sgd(float* p, const float* g, size_t n, float lr) = 0;
  // The token task's input: rows windows of seq_len + 1 token ids (uint16, or uint32 when
  // u32). feats[r][b] = (count of the first seq_len tokens with t % buckets == b)
  // / sqrt(seq_len), and
  // targets[r] = the window's last token (the one to predict).
  virtual void bag_of_tokens(const void* windows, bool u32, int rows, int seq_len, int buckets,
                             float* feats, int64_t* targets) = 0;

  // Blocks until the work queued so far is done (the CPU's is done when queued). Every
  // host wait of the backend (downloads, uploads, this) runs `check` while it waits, which
  // may throw to end the wait: work that waits on a failed peer (NCCL) never completes.
  virtual void synchronize() {}
  void set_wait_check(std::function<void()> check) { wait_check_ = std::move(check); }

 protected:
  std::function<void()> wait_check_;
};

std::unique_ptr<MathOps> make_cpu_ops();

}  // namespace stoker::train
