// Helpers for the loader tests: real files in a temporary folder, a plan for this process,
// and transforms that stand for slow or failing real work.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "error_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "stoker/topology/topology.hpp"
#include "stoker/transforms/copy_transform.hpp"

namespace stoker::test {

// A fresh folder per call, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(::testing::TempDir()) /
            ("stoker_loader_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const void* data, size_t n) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
}

// Token t of the file holds t % 65521 (a prime), so every window's content is checkable.
inline uint16_t token_value(uint64_t t) {
  return static_cast<uint16_t>(t % 65521);
}

inline std::string write_tokens(const TempDir& dir, uint64_t tokens,
                                const std::string& name = "tokens.bin") {
  std::vector<uint16_t> v(tokens);
  for (uint64_t t = 0; t < tokens; ++t) v[t] = token_value(t);
  std::string path = dir.file(name);
  write_bytes(path, v.data(), v.size() * sizeof(uint16_t));
  return path;
}

// A plan for this process: every allowed CPU for the workers, NUMA node of CPU 0. The ring
// may grow to 8 batches (or `prefetch`, when deeper), as an automatic plan's would.
inline Plan test_plan(int workers, int prefetch = 2, uint64_t mem_budget = 64ull << 20) {
  Plan p;
  p.profile = "test";
  p.cpus = task_cpu_mask();
  p.worker_cpus = p.cpus;
  p.main_cpus = p.cpus;
  p.workers = workers;
  p.prefetch = prefetch;
  p.prefetch_max = std::max(prefetch, 8);
  p.mem_budget = mem_budget;
  p.numa = {0};
  return p;
}

inline LoaderOptions test_options(size_t batch, int workers, int prefetch = 2,
                                  uint64_t budget = 64ull << 20) {
  LoaderOptions o;
  o.batch_size = batch;
  o.world_size = 1;
  o.rank = 0;
  o.seed = 1234;
  o.plan = test_plan(workers, prefetch, budget);
  // The test process's thread keeps its CPUs: pinned, every later test in the same process,
  // and each command it starts (stoker bench inherits the mask), would run on the plan's
  // main CPUs only. A test of the pinning asks for it (loader_ring_test.cpp).
  o.pin_main_thread = false;
  return o;
}

// A token file of `windows` windows of `seq_len` + 1 tokens, and the copy transform for it.
struct TokenSetup {
  TempDir dir;
  std::shared_ptr<TokenFileSource> source;
  std::shared_ptr<CopyTransform> copy;
  explicit TokenSetup(uint64_t windows = 1000, uint64_t seq_len = 64) {
    source = std::make_shared<TokenFileSource>(write_tokens(dir, windows * seq_len + 1), seq_len,
                                               DType::U16);
    copy = std::make_shared<CopyTransform>(source->spec());
  }
};

// Checks that a token-window batch holds exactly the windows its indices name.
inline void expect_windows(const Batch& b, uint64_t seq_len) {
  auto tokens = b.as<uint16_t>();
  ASSERT_EQ(tokens.size(), b.size() * (seq_len + 1));
  for (size_t k = 0; k < b.size(); ++k) {
    const uint64_t first = b.indices()[k] * seq_len;
    for (uint64_t j = 0; j <= seq_len; j += seq_len / 4 + 1) {
      ASSERT_EQ(tokens[k * (seq_len + 1) + j], token_value(first + j))
          << "sample " << k << " (index " << b.indices()[k] << ") token " << j;
    }
    ASSERT_EQ(tokens[k * (seq_len + 1) + seq_len], token_value(first + seq_len));
  }
}

// A copy whose cost varies by sample: `slow_every`-th indices sleep `delay` (uneven
// workers), so batches finish out of order.
class SlowCopy : public CopyTransform {
 public:
  SlowCopy(SampleSpec spec, uint64_t slow_every, std::chrono::microseconds delay)
      : CopyTransform(std::move(spec)), every_(slow_every), delay_(delay) {}
  void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
             StageTimes& times) const override {
    if (every_ && key.index % every_ == 0) std::this_thread::sleep_for(delay_);
    CopyTransform::apply(in, key, out, scratch, times);
  }

 private:
  uint64_t every_;
  std::chrono::microseconds delay_;
};

// Records carry a checksum: bytes [0, 8) hold the FNV-1a hash of the rest. A record whose
// checksum does not match is corrupt (a SampleError), as a real decoder would report.
uint64_t record_checksum(const std::byte* payload, size_t n);

class ChecksumCopy : public CopyTransform {
 public:
  using CopyTransform::CopyTransform;
  void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
             StageTimes& times) const override {
    uint64_t stored = 0;
    std::memcpy(&stored, in.bytes.data(), sizeof stored);
    if (stored != record_checksum(in.bytes.data() + 8, in.bytes.size() - 8)) {
      throw SampleError{key.index, {}, "checksum mismatch"};
    }
    CopyTransform::apply(in, key, out, scratch, times);
  }
};

// Writes `n` records of `bytes` (>= 16) bytes; records whose index is in `corrupt` get
// a broken checksum. Labels (index * 10) go to labels.bin. Returns the records path.
std::string write_records(const TempDir& dir, uint64_t n, size_t bytes,
                          const std::set<uint64_t>& corrupt = {});

// The message of the stoker::Error that f throws, or "(no error)" (tests/support).
inline std::string error_of(const std::function<void()>& f) {
  return error_text(f);
}

}  // namespace stoker::test
