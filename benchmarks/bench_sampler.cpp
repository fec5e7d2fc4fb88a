// The distributed sampler's cost: building one rank's shard and yielding its first 1,000
// indices, for 10^9 samples over 4,096 ranks simulated in one process, and the memory it
// takes (heap bytes in use while it lives, from mallinfo2, plus the object's own size).
// Peer, measured in the same run: the usual approach of materialising the permutation
// (torch.randperm, std::shuffle of an index array), whose time and memory grow with N.
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "stoker/distributed/sampler.hpp"

namespace {
// Bytes in use on the heap (glibc), to see what a sampler or a materialised order holds.
uint64_t heap_in_use() {
  const auto m = mallinfo2();
  return m.uordblks + m.hblkhd;  // small blocks + mmapped ones (large arrays)
}
}  // namespace

namespace {
constexpr uint64_t kRanks = 4096;

// Build rank r's shard iterator for epoch 1 and read its first 1,000 indices.
void BM_ShardFirst1000(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  auto first_1000 = [&](uint64_t rank, uint64_t* heap) {
    const uint64_t before = heap_in_use();
    stoker::SamplerOptions o;
    o.size = size;
    o.seed = 42;
    o.world_size = kRanks;
    o.rank = rank;
    o.block = static_cast<uint64_t>(state.range(1));
    stoker::DistributedSampler s(o);
    s.set_epoch(1);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < std::min<uint64_t>(1000, s.length()); ++i) sum += s.at(i);
    if (heap) *heap = heap_in_use() - before;
    return sum;
  };
  uint64_t heap = 0, rank = 0, iterations = 0;
  first_1000(kRanks - 1, &heap);
  for (auto _ : state) {
    benchmark::DoNotOptimize(first_1000(rank, nullptr));
    ++iterations;
    rank = (rank + 1) % kRanks;
  }
  state.counters["heap_bytes"] = static_cast<double>(heap);
  state.counters["object_bytes"] = sizeof(stoker::DistributedSampler);
  const double per_rank = static_cast<double>(std::min<uint64_t>(1000, size / kRanks));
  state.counters["ns_per_index"] =
      benchmark::Counter(per_rank * static_cast<double>(iterations),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel("size=" + std::to_string(size) +
                 " ranks=4096 block=" + std::to_string(state.range(1)));
}
BENCHMARK(BM_ShardFirst1000)
    ->Args({1'000'000, 0})
    ->Args({1'000'000'000, 0})
    ->Args({1'000'000'000'000, 0})
    ->Args({1'000'000'000, 64})
    ->Unit(benchmark::kMicrosecond);

// The peer: materialise the epoch's permutation, then read rank r's first 1,000.
void BM_MaterialisedShuffle(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  uint64_t heap = 0;
  for (auto _ : state) {
    const uint64_t before = heap_in_use();
    std::vector<uint64_t> order(size);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(43));
    uint64_t sum = 0;
    for (uint64_t i = 0; i < 1000 && i * kRanks + 7 < size; ++i) sum += order[i * kRanks + 7];
    benchmark::DoNotOptimize(sum);
    heap = heap_in_use() - before;
  }
  state.counters["heap_bytes"] = static_cast<double>(heap);
  state.SetLabel("size=" + std::to_string(size) + " (10^9 would need 8 GB per rank)");
}
BENCHMARK(BM_MaterialisedShuffle)->Arg(10'000'000)->Iterations(2)->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
