#include "grad_reduce.hpp"

#include <cstdio>
#include <exception>
#include <vector>

#include "stoker/common/error.hpp"
#if STOKER_HAVE_MPI
#include <mpi.h>
#endif
#if STOKER_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace stoker::train {
namespace {

std::string rank_name(const World& w) {
  return "rank " + std::to_string(w.rank) + "/" + std::to_string(w.world_size);
}

class SingleRank : public GradReducer {
 public:
  std::string describe() const override { return "none (1 rank)"; }
  void mean(float*, size_t) override {}
};

#if STOKER_HAVE_MPI
void check_mpi(int rc, const char* call, const World& w) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(rank_name(w), std::string(call) + " failed: " + text);
}

// MPI_Allreduce in place on host memory; GPU gradients are staged through the host.
class MpiReducer : public GradReducer {
 public:
  MpiReducer(const World& w, MathOps* ops, bool staged) : world_(w), ops_(ops), staged_(staged) {}
  std::string describe() const override {
    return std::string("MPI_Allreduce over ") + std::to_string(world_.world_size) + " ranks" +
           (staged_ ? " (GPU gradients staged through host memory: no NCCL in this build)" : "");
  }
  void mean(float* grads, size_t n) override {
    float* host = grads;
    if (staged_) {
      host_.resize(n);
      ops_->download(host_.data(), grads, n);
      host = host_.data();
    }
    check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, host, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce", world_);
    const float scale = 1.0f / static_cast<float>(world_.world_size);
    for (size_t i = 0; i < n; ++i) host[i] *= scale;
    if (staged_) ops_->upload(grads, host_.data(), n);
  }

 private:
  World world_;
  MathOps* ops_;
  bool staged_;
  std::vector<float> host_;
};
#endif

#if STOKER_HAVE_MPI
// "0, 2, 5" (the first 8, then how many in all).
std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i) {
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (ranks.size() > 8) out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return out;
}

// Every rank must build the same reducer: NCCL ranks meet in the id broadcast, MPI ranks
// in MPI_Allreduce. A rank that fell back to the CPU while the others use their GPUs
// would wait in another collective than theirs, and the job would hang; it stops instead,
// on every rank, with the ranks on each side named. (Without NCCL the collectives would
// match, but the CPU rank would set every GPU rank's pace: a fallback to look at, too.)
void agree_on_the_device(const World& w, bool on_gpu) {
  const int mine = on_gpu ? 1 : 0;
  std::vector<int> all(w.world_size);
  check_mpi(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD),
            "MPI_Allgather (devices)", w);
  std::vector<int> gpu, cpu;
  for (size_t r = 0; r < all.size(); ++r) (all[r] ? gpu : cpu).push_back(static_cast<int>(r));
  if (gpu.empty() || cpu.empty()) return;
  throw Error(rank_name(w),
              "the ranks do not train on the same device: GPU on rank(s) " + rank_list(gpu) +
                  ", CPU on rank(s) " + rank_list(cpu) + " (each rank's 'device' line says why)",
              "give every rank a usable GPU, or run every rank on the CPU (--device cpu)");
}
#endif

#if STOKER_HAVE_NCCL
class NcclReducer : public GradReducer {
 public:
  NcclReducer(const World& w, void* stream)
      : world_(w), stream_(static_cast<cudaStream_t>(stream)) {
    ncclUniqueId id{};
    if (w.rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast (NCCL id)", w);
    check(ncclCommInitRank(&comm_, static_cast<int>(w.world_size), id, static_cast<int>(w.rank)),
          "ncclCommInitRank");
  }
  // While unwinding, a collective may never finish (a dead peer), and ncclCommDestroy waits
  // for the communicator's queued work: it is aborted instead.
  ~NcclReducer() override {
    if (!comm_) return;
    if (std::uncaught_exceptions() > 0) {
      ncclCommAbort(comm_);
    } else {
      ncclCommDestroy(comm_);
    }
  }
  void abort() override {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  std::string describe() const override {
    return "NCCL allreduce over " + std::to_string(world_.world_size) + " ranks";
  }
  void mean(float* grads, size_t n) override {
    check(ncclAllReduce(grads, grads, n, ncclFloat, ncclAvg, comm_, stream_), "ncclAllReduce");
  }
  // NCCL reports a failed peer or network asynchronously, and the kernels of a broken
  // collective never finish: without this poll the step's stream waits forever.
  void check() override {
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
    if (async == ncclSuccess) return;
    ncclCommAbort(comm_);  // ends the communicator's kernels, so the stream can drain
    comm_ = nullptr;
    check(async, "an NCCL collective (asynchronous error)");
  }

 private:
  void check(ncclResult_t r, const char* call) const {
    if (r == ncclSuccess) return;
    throw Error(rank_name(world_), std::string(call) + " failed: " + ncclGetErrorString(r),
                "NCCL_DEBUG=INFO shows why; check that every rank sees its own GPU");
  }
  World world_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
};
#endif

}  // namespace

std::unique_ptr<GradReducer> make_grad_reducer(const World& world, const ReduceTarget& t) {
  if (world.world_size <= 1) return std::make_unique<SingleRank>();
  if (!world.mpi) {
#if STOKER_HAVE_MPI
    const std::string built = "";
#else
    const std::string built = " (stoker was built without MPI)";
#endif
    throw Error(rank_name(world),
                "a world of " + std::to_string(world.world_size) + " ranks (from " + world.source +
                    ") but this process was not launched under MPI" + built,
                "launch with srun --mpi=pmix (or mpirun), one task per GPU or CPU share");
  }
#if STOKER_HAVE_MPI
  agree_on_the_device(world, t.on_gpu);
#endif
#if STOKER_HAVE_NCCL
  if (t.on_gpu) return std::make_unique<NcclReducer>(world, t.stream);
#endif
#if STOKER_HAVE_MPI
  return std::make_unique<MpiReducer>(world, t.ops, t.on_gpu);
#else
  (void)t;
  return nullptr;  // unreachable: world.mpi is never true without MPI
#endif
}

double mean_over_ranks(const World& world, double v) {
#if STOKER_HAVE_MPI
  if (world.mpi && world.world_size > 1) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce", world);
    return v / static_cast<double>(world.world_size);
  }
#endif
  (void)world;
  return v;
}

double max_over_ranks(const World& world, double v) {
#if STOKER_HAVE_MPI
  if (world.mpi && world.world_size > 1) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
              "MPI_Allreduce", world);
  }
#endif
  (void)world;
  return v;
}

bool world_abortable(const World& world) {
#if STOKER_HAVE_MPI
  return world.mpi && world.world_size > 1;
#else
  (void)world;
  return false;
#endif
}

void abort_world(const World& world, int code) {
#if STOKER_HAVE_MPI
  if (world_abortable(world)) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  (void)world;
  (void)code;
}

void fail(const World& world, const std::exception& e) {
  std::fprintf(stderr, "stoker_train: error: %s\n", e.what());
  std::fflush(stderr);
  abort_world(world, 2);  // no other rank waits forever in a collective
}

}  // namespace stoker::train
