#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda_ops.hpp"
#include "stoker/common/error.hpp"

namespace stoker::train {
namespace {

constexpr int kTile = 16;
constexpr int kThreads = 256;
// The longest the host waits for the GPU's queued work: a peer that stopped without NCCL
// seeing an error would otherwise hold the step forever. A step of this trainer takes
// milliseconds; NCCL's own watchdog in torch allows 30 minutes for a collective.
constexpr auto kWaitLimit = std::chrono::minutes(10);

__global__ void gemm_kernel(int M, int N, int K, const float* a, long a_m, long a_k, const float* b,
                            long b_k, long b_n, float* c, bool accumulate) {
  __shared__ float as[kTile][kTile + 1];
  __shared__ float bs[kTile][kTile + 1];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * a_m + ka * a_k] : 0.0f;
    bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[kb * b_k + col * b_n] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) {
    const size_t i = static_cast<size_t>(row) * N + col;
    c[i] = accumulate ? c[i] + sum : sum;
  }
}

__global__ void bias_act_kernel(float* x, const float* bias, size_t n, int cols, bool relu) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = x[i] + bias[i % cols];
  x[i] = relu ? fmaxf(v, 0.0f) : v;
}

// One thread per row: the class count is small in this trainer.
__global__ void softmax_xent_kernel(const float* logits, const int64_t* targets, int rows, int cols,
                                    float* dlogits, float* row_loss) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* l = logits + static_cast<size_t>(r) * cols;
  float* d = dlogits + static_cast<size_t>(r) * cols;
  float mx = l[0];
  for (int c = 1; c < cols; ++c) mx = fmaxf(mx, l[c]);
  float sum = 0;
  for (int c = 0; c < cols; ++c) sum += expf(l[c] - mx);
  const int t = static_cast<int>(((targets[r] % cols) + cols) % cols);
  row_loss[r] = logf(sum) - (l[t] - mx);
  for (int c = 0; c < cols; ++c) d[c] = (expf(l[c] - mx) / sum - (c == t ? 1.0f : 0.0f)) / rows;
}

__global__ void column_sums_kernel(const float* x, int rows, int cols, float* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int r = 0; r < rows; ++r) s += x[static_cast<size_t>(r) * cols + c];
  out[c] = s;
}

__global__ void relu_backward_kernel(float* d, const float* h, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n && h[i] <= 0.0f) d[i] = 0.0f;
}

__global__ void sgd_kernel(float* p, const float* g, size_t n, float lr) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] -= lr * g[i];
}

// One block per window: zero the row, count its tokens, write the target.
__global__ void bag_of_tokens_kernel(const void* windows, bool u32, int seq_len, int buckets,
                                     float* feats, int64_t* targets) {
  const int r = blockIdx.x;
  float* f = feats + static_cast<size_t>(r) * buckets;
  for (int b = threadIdx.x; b < buckets; b += blockDim.x) f[b] = 0.0f;
  __syncthreads();
  const size_t base = static_cast<size_t>(r) * (seq_len + 1);
  const float w = rsqrtf(static_cast<float>(seq_len));  // ~unit-norm input
  for (int i = threadIdx.x; i <= seq_len; i += blockDim.x) {
    const unsigned t = u32 ? static_cast<const unsigned*>(windows)[base + i]
                           : static_cast<const unsigned short*>(windows)[base + i];
    if (i < seq_len) {
      atomicAdd(&f[t % buckets], w);
    } else {
      targets[r] = t;
    }
  }
}

unsigned blocks(size_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

class CudaOps : public MathOps {
 public:
  CudaOps(int device, std::string gpu, void* stream)
      : device_(device), gpu_(std::move(gpu)), stream_(static_cast<cudaStream_t>(stream)) {
    check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CudaOps() override {
    if (row_loss_) cudaFree(row_loss_);
    if (staging_) cudaFreeHost(staging_);
    cudaEventDestroy(done_);
  }
  std::string name() const override { return "cuda " + gpu_; }

  float* alloc(size_t n) override {
    void* p = nullptr;
    check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
    check(cudaMemsetAsync(p, 0, n * sizeof(float), stream_), "cudaMemsetAsync");
    return static_cast<float*>(p);
  }
  void free(float* p) override { cudaFree(p); }
  int64_t* alloc_i64(size_t n) override {
    void* p = nullptr;
    check(cudaMalloc(&p, n * sizeof(int64_t)), "cudaMalloc");
    return static_cast<int64_t*>(p);
  }
  void free_i64(int64_t* p) override { cudaFree(p); }
  // Both directions go through page-locked memory: a copy with pageable memory returns only
  // once it is done (or, host to device, once the stream's earlier work is), so the host
  // would wait inside the driver behind an allreduce a dead peer never finishes, where no
  // check can run. With pinned memory the copy is queued and synchronize() polls.
  void upload(float* dst, const float* src, size_t n) override {
    std::memcpy(staging(n), src, n * sizeof(float));
    check(cudaMemcpyAsync(dst, staging_, n * sizeof(float), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync");
    synchronize();
  }
  void download(float* dst, const float* src, size_t n) override {
    check(cudaMemcpyAsync(staging(n), src, n * sizeof(float), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync");
    synchronize();
    std::memcpy(dst, staging_, n * sizeof(float));
  }
  // Polls an event rather than cudaStreamSynchronize: an NCCL allreduce queued on the stream
  // waits for every peer, forever if one died, and only polling lets the check (the
  // reducer's ncclCommGetAsyncError) see the failure and stop the wait; the deadline ends a
  // wait on a peer that stopped without an error NCCL reports.
  void synchronize() override {
    check(cudaEventRecord(done_, stream_), "cudaEventRecord");
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    for (;;) {
      const cudaError_t e = cudaEventQuery(done_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) check(e, "cudaEventQuery");
      cudaGetLastError();  // "not ready" is no error: leave nothing for the next check
      if (wait_check_) wait_check_();
      if (std::chrono::steady_clock::now() > deadline) {
        throw Error("GPU " + gpu_,
                    "the step's work did not finish within " +
                        std::to_string(std::chrono::seconds(kWaitLimit).count()) +
                        " s (a collective waiting for a rank that stopped?)",
                    "look at the other ranks' errors; NCCL_DEBUG=INFO shows the collectives");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void gemm(int M, int N, int K, const float* a, long a_m, long a_k, const float* b, long b_k,
            long b_n, float* c, bool accumulate) override {
    const dim3 threads(kTile, kTile);
    const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
    gemm_kernel<<<grid, threads, 0, stream_>>>(M, N, K, a, a_m, a_k, b, b_k, b_n, c, accumulate);
    check(cudaGetLastError(), "gemm kernel launch");
  }
  void bias_act(float* x, const float* bias, int rows, int cols, bool relu) override {
    const size_t n = static_cast<size_t>(rows) * cols;
    bias_act_kernel<<<blocks(n), kThreads, 0, stream_>>>(x, bias, n, cols, relu);
    check(cudaGetLastError(), "bias kernel launch");
  }
  float softmax_xent(const float* logits, const int64_t* targets, int rows, int cols,
                     float* dlogits) override {
    if (rows > row_loss_rows_) {
      if (row_loss_) cudaFree(row_loss_);
      row_loss_ = alloc(rows);
      row_loss_rows_ = rows;
      host_loss_.resize(rows);
    }
    softmax_xent_kernel<<<blocks(rows), kThreads, 0, stream_>>>(logits, targets, rows, cols,
                                                                dlogits, row_loss_);
    check(cudaGetLastError(), "softmax kernel launch");
    download(host_loss_.data(), row_loss_, rows);
    double sum = 0;
    for (int r = 0; r < rows; ++r) sum += host_loss_[r];
    return static_cast<float>(sum / rows);
  }
  void column_sums(const float* x, int rows, int cols, float* out) override {
    column_sums_kernel<<<blocks(cols), kThreads, 0, stream_>>>(x, rows, cols, out);
    check(cudaGetLastError(), "column sum kernel launch");
  }
  void relu_backward(float* d, const float* h, size_t n) override {
    relu_backward_kernel<<<blocks(n), kThreads, 0, stream_>>>(d, h, n);
    check(cudaGetLastError(), "relu kernel launch");
  }
  void sgd(float* p, const float* g, size_t n, float lr) override {
    sgd_kernel<<<blocks(n), kThreads, 0, stream_>>>(p, g, n, lr);
    check(cudaGetLastError(), "sgd kernel launch");
  }
  void bag_of_tokens(const void* windows, bool u32, int rows, int seq_len, int buckets,
                     float* feats, int64_t* targets) override {
    bag_of_tokens_kernel<<<rows, kThreads, 0, stream_>>>(windows, u32, seq_len, buckets, feats,
                                                         targets);
    check(cudaGetLastError(), "token kernel launch");
  }

 private:
  void check(cudaError_t e, const char* what) const {
    if (e == cudaSuccess) return;
    cudaGetLastError();
    throw Error("GPU " + gpu_, std::string(what) + ": " + cudaGetErrorString(e));
  }
  // Page-locked host memory for at least n floats. Grown, rarely: cudaFreeHost waits for
  // the device, which is why the buffer is kept rather than made per copy.
  float* staging(size_t n) {
    if (n > staging_floats_) {
      if (staging_) cudaFreeHost(staging_);
      staging_ = nullptr;
      staging_floats_ = 0;
      void* p = nullptr;
      check(cudaMallocHost(&p, n * sizeof(float)), "cudaMallocHost");
      staging_ = static_cast<float*>(p);
      staging_floats_ = n;
    }
    return staging_;
  }
  int device_;
  std::string gpu_;
  cudaStream_t stream_;
  cudaEvent_t done_ = nullptr;  // recorded by synchronize(), polled
  float* staging_ = nullptr;
  size_t staging_floats_ = 0;
  float* row_loss_ = nullptr;
  int row_loss_rows_ = 0;
  std::vector<float> host_loss_;
};

}  // namespace

std::unique_ptr<MathOps> make_cuda_ops(int device, const std::string& gpu, void* stream) {
  return std::make_unique<CudaOps>(device, gpu, stream);
}

}  // namespace stoker::train
