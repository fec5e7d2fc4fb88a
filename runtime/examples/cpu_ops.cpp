// The CPU backend: plain loops in an order the compiler vectorises (the inner loop runs
// over contiguous memory whenever the strides allow it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "math_ops.hpp"

namespace stoker::train {
namespace {

class CpuOps : public MathOps {
 public:
  std::string name() const override { return "cpu"; }
  float* alloc(size_t n) override { return new float[n](); }
  void free(float* p) override { delete[] p; }
  void upload(float* dst, const float* src, size_t n) override {
    std::memcpy(dst, src, n * sizeof(float));
  }
  void download(float* dst, const float* src, size_t n) override {
    std::memcpy(dst, src, n * sizeof(float));
  }

  int64_t* alloc_i64(size_t n) override { return new int64_t[n](); }
  void free_i64(int64_t* p) override { delete[] p; }

  void gemm(int M, int N, int K, const float* a, long a_m, long a_k, const float* b, long b_k,
            long b_n, float* c, bool accumulate) override {
    if (!accumulate) std::fill(c, c + static_cast<size_t>(M) * N, 0.0f);
    if (b_n == 1) {
      // B's rows are contiguous: c[m][:] += a(m,k) * b[k][:]
      for (int m = 0; m < M; ++m) {
        float* cr = c + static_cast<size_t>(m) * N;
        for (int k = 0; k < K; ++k) {
          const float av = a[m * a_m + k * a_k];
          if (av == 0.0f) continue;
          const float* br = b + k * b_k;
          for (int n = 0; n < N; ++n) cr[n] += av * br[n];
        }
      }
      return;
    }
    // B(k, n) contiguous along k (a transposed weight): dot products along k.
    for (int m = 0; m < M; ++m) {
      for (int n = 0; n < N; ++n) {
        float s = 0;
        if (a_k == 1 && b_k == 1) {
          const float* ar = a + m * a_m;
          const float* bc = b + n * b_n;
          for (int k = 0; k < K; ++k) s += ar[k] * bc[k];
        } else {
          for (int k = 0; k < K; ++k) s += a[m * a_m + k * a_k] * b[k * b_k + n * b_n];
        }
        c[static_cast<size_t>(m) * N + n] += s;
      }
    }
  }

  void bias_act(float* x, const float* bias, int rows, int cols, bool relu) override {
    for (int r = 0; r < rows; ++r) {
      float* xr = x + static_cast<size_t>(r) * cols;
      for (int c = 0; c < cols; ++c) {
        const float v = xr[c] + bias[c];
        xr[c] = relu ? std::max(v, 0.0f) : v;
      }
    }
  }

  float softmax_xent(const float* logits, const int64_t* targets, int rows, int cols,
                     float* dlogits) override {
    double loss = 0;
    for (int r = 0; r < rows; ++r) {
      const float* l = logits + static_cast<size_t>(r) * cols;
      float* d = dlogits + static_cast<size_t>(r) * cols;
      const float mx = *std::max_element(l, l + cols);
      double sum = 0;
      for (int c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(l[c] - mx));
      const int t = static_cast<int>(((targets[r] % cols) + cols) % cols);
      loss += std::log(sum) - (l[t] - mx);
      for (int c = 0; c < cols; ++c) {
        const double p = std::exp(static_cast<double>(l[c] - mx)) / sum;
        d[c] = static_cast<float>((p - (c == t ? 1.0 : 0.0)) / rows);
      }
    }
    return static_cast<float>(loss / rows);
  }

  void column_sums(const float* x, int rows, int cols, float* out) override {
    std::fill(out, out + cols, 0.0f);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) out[c] += x[static_cast<size_t>(r) * cols + c];
    }
  }

  void relu_backward(float* d, const float* h, size_t n) override {
    for (size_t i = 0; i < n; ++i) d[i] = h[i] > 0.0f ? d[i] : 0.0f;
  }

  void sgd(float* p, const float* g, size_t n, float lr) override {
    for (size_t i = 0; i < n; ++i) p[i] -= lr * g[i];
  }

  void bag_of_tokens(const void* windows, bool u32, int rows, int seq_len, int buckets,
                     float* feats, int64_t* targets) override {
    std::fill(feats, feats + static_cast<size_t>(rows) * buckets, 0.0f);
    const float w = 1.0f / std::sqrt(static_cast<float>(seq_len));  // ~unit-norm input
    for (int r = 0; r < rows; ++r) {
      const size_t base = static_cast<size_t>(r) * (seq_len + 1);
      auto token = [&](size_t i) -> uint32_t {
        return u32 ? static_cast<const uint32_t*>(windows)[base + i]
                   : static_cast<const uint16_t*>(windows)[base + i];
      };
      float* f = feats + static_cast<size_t>(r) * buckets;
      for (int i = 0; i < seq_len; ++i) f[token(i) % buckets] += w;
      targets[r] = token(seq_len);
    }
  }
};

}  // namespace

std::unique_ptr<MathOps> make_cpu_ops() {
  return std::make_unique<CpuOps>();
}

}  // namespace stoker::train
