// The device feeder's ordering faults on a real GPU (skipped without one; the
// same rules are checked without a GPU in tests/unit/cuda/feeder_core_order_test.cpp):
//   - the documented consumer pattern with no host wait: every batch a kernel reads 20 ms
//     after its hand-out (a device-to-device copy into a per-batch archive) is the batch the
//     loader made, with release(s) and with release(); a shallow ring (prefetch 1-2) and
//     32 MiB batches make a slot refilled under its copy, or a buffer overwritten under its
//     kernel, show;
//   - no "not ready" error left behind by the feeder's event queries;
//   - feeding GPU 1 from a thread that never chose a device makes no context on GPU 0;
//   - a failed pin names its cause, not ulimit -l, and leaves no error behind.
#include <thread>
#include <vector>

#include "cuda/device_scope.hpp"
#include "gpu_fixture.hpp"
#include "spin_kernel.hpp"
#include "stoker/cuda/cuda_feeder.hpp"

namespace stoker {
namespace {

using test::TempDir;

constexpr uint64_t kSeq = 16383;  // 16384 uint16 tokens: 32 KiB a window
constexpr size_t kBatch = 1024;   // 32 MiB a batch
constexpr uint64_t kBatches = 8;

struct ArchiveRun {
  TempDir dir;
  std::shared_ptr<TokenFileSource> source =
      std::make_shared<TokenFileSource>(test::write_tokens(dir, kBatches* kBatch* kSeq + 1), kSeq);

  LoaderOptions options(const std::string& bus, int prefetch) const {
    Plan plan = test::gpu_test_plan(bus, prefetch, 1ull << 30);
    LoaderOptions o = test::gpu_loader_options(plan, kBatch, DeviceFeeder::kDefaultDepth + 1);
    o.adaptive = false;  // the ring stays this shallow: slots are reused at once
    o.max_depth = prefetch;
    return o;
  }

  // The first token of each window of each batch, from the same loader read on the host.
  std::vector<std::vector<uint16_t>> expected_firsts(LoaderOptions o) const {
    o.pinner = nullptr;
    Loader reference(source, std::make_shared<CopyTransform>(source->spec()), o);
    std::vector<std::vector<uint16_t>> out(kBatches);
    for (Batch& b : reference) {
      for (size_t k = 0; k < b.size(); ++k)
        out[b.number()].push_back(b.as<uint16_t>()[k * (kSeq + 1)]);
    }
    return out;
  }
};

// One epoch, the consumer never waiting on the host: wait_on(s), 20 ms of "compute", a
// device-to-device copy of the batch into the archive, release(s) or release().
void archive_epoch(const std::string& bus, int prefetch, bool release_on_stream) {
  ArchiveRun run;
  const LoaderOptions o = run.options(bus, prefetch);
  Loader loader(run.source, std::make_shared<CopyTransform>(run.source->spec()), o);
  DeviceFeeder feeder(loader);
  ASSERT_TRUE(feeder.stats().host_pinned) << loader.stats().summary();
  cudaStream_t s;
  STOKER_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const long long cycles = stoker_spin_cycles_for(20.0, s);
  const size_t batch_bytes = kBatch * (kSeq + 1) * sizeof(uint16_t);
  std::byte* archive = nullptr;
  STOKER_CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&archive), kBatches * batch_bytes));
  loader.start_epoch();
  uint64_t steps = 0;
  while (auto b = feeder.next()) {
    ASSERT_EQ(cudaPeekAtLastError(), cudaSuccess) << "the feeder left an error behind";
    ASSERT_EQ(b->bytes(), batch_bytes);
    b->wait_on(s);
    stoker_spin(cycles, s);
    STOKER_CUDA_OK(cudaMemcpyAsync(archive + b->number() * batch_bytes, b->data(), batch_bytes,
                                   cudaMemcpyDeviceToDevice, s));
    b->release(release_on_stream ? s : nullptr);
    ++steps;
  }
  STOKER_CUDA_OK(cudaStreamSynchronize(s));
  ASSERT_EQ(steps, kBatches);
  const auto firsts = run.expected_firsts(o);
  std::vector<uint16_t> host(batch_bytes / 2);
  int wrong = 0;
  for (uint64_t n = 0; n < kBatches; ++n) {
    STOKER_CUDA_OK(
        cudaMemcpy(host.data(), archive + n * batch_bytes, batch_bytes, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < kBatch; ++k) {
      const uint16_t* w = host.data() + k * (kSeq + 1);
      bool ok = w[0] == firsts[n][k];
      for (uint64_t j = 1; ok && j <= kSeq; j += 97) ok = w[j] == (w[0] + j) % 65521;
      ok = ok && w[kSeq] == (w[0] + kSeq) % 65521;
      if (!ok && wrong++ < 3)
        ADD_FAILURE() << "batch " << n << " window " << k << " is not the loader's";
    }
  }
  EXPECT_EQ(wrong, 0) << "windows wrong of " << kBatches * kBatch << " (prefetch " << prefetch
                      << (release_on_stream ? ", release(s))" : ", release())");
  cudaFree(archive);
  cudaStreamDestroy(s);
}

TEST(FaultsFeederOrder, EveryArchivedBatchIsTheLoadersWithReleaseOnTheStream) {
  STOKER_GPU_OR_SKIP(bus);
  for (int prefetch : {1, 2}) archive_epoch(bus, prefetch, true);
}

TEST(FaultsFeederOrder, EveryArchivedBatchIsTheLoadersWithReleaseWithoutAStream) {
  STOKER_GPU_OR_SKIP(bus);
  for (int prefetch : {1, 2}) archive_epoch(bus, prefetch, false);
}

// The feeder and the pinner on GPU 1, from threads that never chose a device (the main one
// and a worker): GPU 0 must get no context (hundreds of MiB on every rank's GPU 0).
TEST(FaultsFeederOrder, FeedingGpu1MakesNoContextOnGpu0) {
  STOKER_GPU_OR_SKIP(bus0);
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 2) GTEST_SKIP() << "needs two GPUs: GPU 0 must stay untouched while GPU 1 is fed";
  if (cuda::primary_context_active(0)) GTEST_SKIP() << "GPU 0 has a context before the test";
  char bus1[32] = {};
  STOKER_CUDA_OK(cudaDeviceGetPCIBusId(bus1, sizeof bus1, 1));
  TempDir dir;
  auto src = std::make_shared<TokenFileSource>(test::write_tokens(dir, 64 * 255 + 1), 255);
  std::string failure;
  std::thread worker([&] {
    try {
      auto loader = std::make_unique<Loader>(
          src, std::make_shared<CopyTransform>(src->spec()),
          test::gpu_loader_options(test::gpu_test_plan(bus1, 2, 256ull << 20), 8, 3));
      DeviceFeeder feeder(*loader);
      loader->start_epoch();
      while (auto b = feeder.next()) {
        b->synchronize();
        b->release();
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });  // the loader (and its unpin) ends on the worker thread
  worker.join();
  EXPECT_EQ(failure, "");
  EXPECT_FALSE(cuda::primary_context_active(0)) << "a context was made on GPU 0";
}

TEST(FaultsFeederOrder, AFailedPinNamesItsCauseAndLeavesNoError) {
  STOKER_GPU_OR_SKIP(bus);
  const Plan plan = test::gpu_test_plan(bus, 2, 64ull << 20);
  auto first = make_host_pinner(plan), second = make_host_pinner(plan);
  std::vector<std::byte> memory(1 << 20);
  std::string why;
  ASSERT_TRUE(first->pin(memory.data(), memory.size(), &why)) << why;
  EXPECT_FALSE(second->pin(memory.data(), memory.size(), &why));  // registered already
  EXPECT_NE(why.find("registered already"), std::string::npos) << why;
  EXPECT_EQ(why.find("ulimit"), std::string::npos) << "the driver's pinning is not limited by it";
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "an error left for the application";
  first->unpin(memory.data(), memory.size());
}

}  // namespace
}  // namespace stoker
