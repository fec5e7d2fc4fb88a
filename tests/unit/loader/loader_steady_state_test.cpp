// Steady state: no heap allocation per batch (global operator new is replaced in this test
// binary by a counting version), and the token-window throughput of the loader.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "loader_fixture.hpp"

namespace {
std::atomic<uint64_t> g_allocations{0};

void* counted_alloc(std::size_t n, std::size_t align = 0) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  void* p = align ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  return counted_alloc(n);
}
void* operator new[](std::size_t n) {
  return counted_alloc(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

using namespace stoker;
using stoker::test::TempDir;

TEST(SteadyState, NoHeapAllocationPerBatch) {
  TempDir dir;
  constexpr uint64_t kSeqLen = 256;
  auto source = std::make_shared<TokenFileSource>(test::write_tokens(dir, 20000 * kSeqLen + 1),
                                                  kSeqLen, DType::U16);
  auto copy = std::make_shared<CopyTransform>(source->spec());
  Loader loader(source, copy, test::test_options(16, 2, 4));
  ASSERT_GE(loader.batches_per_epoch(), 1000u);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(loader.next().has_value());  // warm-up
  const uint64_t before = g_allocations.load();
  uint64_t samples = 0;
  for (int i = 0; i < 800; ++i) {
    std::optional<Batch> b = loader.next();
    if (!b) break;
    samples += b->size();
  }
  const uint64_t after = g_allocations.load();
  EXPECT_EQ(samples, 800u * 16);
  EXPECT_EQ(after - before, 0u) << "heap allocations during 800 steady-state batches";
}

// Throughput of token windows (2048-token windows, batch 16), as docs/benchmarks.md
// measures them.
// STOKER_LOADER_BENCH_BATCHES sets the number of batches (default 3000: about 0.1 s).
TEST(SteadyState, TokenWindowThroughput) {
  TempDir dir;
  constexpr uint64_t kSeqLen = 2048;
  const uint64_t windows = 8192;  // a 32 MiB file
  auto source = std::make_shared<TokenFileSource>(test::write_tokens(dir, windows * kSeqLen + 1),
                                                  kSeqLen, DType::U16);
  auto copy = std::make_shared<CopyTransform>(source->spec());
  const char* env = std::getenv("STOKER_LOADER_BENCH_BATCHES");
  const uint64_t batches = env ? std::strtoull(env, nullptr, 10) : 3000;
  // STOKER_LOADER_BENCH_WORKERS: workers (default: one per allowed CPU).
  const char* wenv = std::getenv("STOKER_LOADER_BENCH_WORKERS");
  const int workers =
      wenv ? std::max(1, std::atoi(wenv)) : std::max(1, test::test_plan(1).worker_cpus.count());
  Loader loader(source, copy, test::test_options(16, workers, 4, 256ull << 20));
  uint64_t got = 0;
  while (got < batches) {
    for (Batch& b : loader) {
      (void)b;
      if (++got == batches) break;
    }
  }
  LoaderStats st = loader.stats();
  const double gbs = st.bytes / (st.wall_ns / 1e9) / 1e9;
  std::printf(
      "token windows: %llu batches of 16 x 2049 uint16, %d workers: %.2f GB/s, "
      "wait share %.1f %%, depth %d\n%s",
      static_cast<unsigned long long>(st.batches), workers, gbs, 100 * st.wait_share, st.depth,
      st.summary().c_str());
  RecordProperty("GBps", std::to_string(gbs));
  EXPECT_GT(gbs, 0.0);
}
