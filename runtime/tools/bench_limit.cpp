// `stoker bench images --limit`: the per-core limits the loader is measured against.
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench.hpp"
#include "stoker/loader/dataset.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker::cli {

namespace {

using nlohmann::json;

// Up to 512 MiB of the source's files, in memory.
std::vector<std::vector<std::byte>> files_in_memory(const Source& src) {
  std::vector<std::vector<std::byte>> files;
  std::vector<std::byte> scratch;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < src.size() && bytes < (512u << 20); ++i) {
    const RawSample s = src.read(i, scratch);
    files.emplace_back(s.bytes.begin(), s.bytes.end());
    bytes += s.bytes.size();
  }
  return files;
}

}  // namespace

void run_limit(const Common& c, double seconds, const DatasetSpec& spec) {
  // The dataset as the loader would open it, under the plan this process would run (its
  // workers are the cores the limit is multiplied by); no loader runs beside the measurement.
  const LoaderOptions options = c.loader_options();
  Plan plan;
  const Dataset d = open_dataset(
      spec,
      [&](const SampleSpec&) -> const Plan& {
        plan = plan_for_this_process().plan;
        return plan;
      },
      1, false);
  const Transform& t = *d.transform;
  const std::vector<std::vector<std::byte>> files = files_in_memory(*d.source);
  std::vector<std::byte> out(t.output_spec().bytes());
  Scratch sc;
  StageTimes times;
  // Pipeline: decode + crop + resize + flip + normalize, as the workers run it.
  uint64_t n = 0;
  auto start = Clock::now();
  while (seconds_since(start) < seconds || n < files.size()) {
    t.apply({files[n % files.size()], 0}, {options.seed, 0, n}, out.data(), sc, times);
    ++n;
  }
  const double pipeline = static_cast<double>(n) / seconds_since(start);
  uint64_t m = 0;
  start = Clock::now();
  while (seconds_since(start) < seconds || m < files.size()) {
    (void)decode_rgb(files[m % files.size()]);  // the full decode alone, to RGB
    ++m;
  }
  const double decode = static_cast<double>(m) / seconds_since(start);
  const int cores = options.workers > 0 ? options.workers : plan.workers;
  const auto per_image_ms = [n](uint64_t ns) {
    return static_cast<double>(ns) / 1e6 / static_cast<double>(n);
  };
  json j = {{"what", "images limit"},
            {"files_in_memory", files.size()},
            {"transform", t.describe()},
            {"pipeline_per_thread", pipeline},
            {"decode_ms", per_image_ms(times.decode_ns)},
            {"transform_ms", per_image_ms(times.transform_ns)},
            {"full_decode_per_thread", decode},
            {"cores", cores},
            {"pipeline_limit", pipeline * cores},
            {"full_decode_limit", decode * cores}};
  if (c.json) {
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("stoker bench images --limit (%zu files in memory, one thread, %.0f s each)\n",
              files.size(), seconds);
  std::printf(
      "  pipeline    %.0f img/s per thread (decode %.3f ms + transform %.3f ms); x %d "
      "cores = %.0f img/s\n",
      pipeline, per_image_ms(times.decode_ns), per_image_ms(times.transform_ns), cores,
      pipeline * cores);
  std::printf("  full decode %.0f img/s per thread (whole image, RGB); x %d cores = %.0f img/s\n",
              decode, cores, decode * cores);
}

}  // namespace stoker::cli
