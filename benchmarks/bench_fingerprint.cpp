// The content part of a file-backed source's fingerprint (src/sources/content_sample.hpp):
// what it costs at open, on a generated set in a temporary folder. Page cache warm (the
// files were just written); cold-cache figures are estimated in docs/user-guide.md ("Shuffle
// and resume"). `bench_fingerprint --benchmark_filter=Files` for one case.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sources/content_sample.hpp"

namespace {

struct GeneratedSet {
  std::string dir;
  std::vector<std::string> paths;  // ContentFile points into them: reserved, never moved
  std::vector<stoker::ContentFile> images, tokens;
  GeneratedSet() {
    paths.reserve(20001);
    dir =
        (std::filesystem::temp_directory_path() / ("stoker-bench-fp-" + std::to_string(::getpid())))
            .string();
    std::filesystem::create_directories(dir);
    const std::string body(16 << 10, 'x');  // 20,000 files of 16 KiB: 320 MiB
    for (int i = 0; i < 20000; ++i) {
      const std::string& p = paths.emplace_back(dir + "/" + std::to_string(i) + ".jpg");
      std::ofstream(p, std::ios::binary) << body;
      images.push_back({p.c_str(), body.size()});
    }
    const std::string& t = paths.emplace_back(dir + "/tokens.bin");  // 8 GiB, sparse
    std::ofstream(t, std::ios::binary).close();
    std::filesystem::resize_file(t, uint64_t{8} << 30);
    tokens.push_back({t.c_str(), uint64_t{8} << 30});
  }
  ~GeneratedSet() { std::filesystem::remove_all(dir); }
};

GeneratedSet& generated() {
  static GeneratedSet set;
  return set;
}

void BM_Files20000(benchmark::State& state) {
  const auto& files = generated().images;  // made before the timing starts
  for (auto _ : state) benchmark::DoNotOptimize(stoker::content_sample_hash(files, 1));
}
void BM_TokenFile8GiB(benchmark::State& state) {
  const auto& files = generated().tokens;
  for (auto _ : state) benchmark::DoNotOptimize(stoker::content_sample_hash(files, 1));
}
BENCHMARK(BM_Files20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TokenFile8GiB)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
