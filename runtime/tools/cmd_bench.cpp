// `stoker bench images|tokens`: runs the loader on this process's plan over a real dataset
// and reports throughput, where the time went, the consumer's wait share, peak RSS, what
// the prefetch controller chose, and the first-batch time of every epoch.
// `stoker bench images DIR --limit` measures the per-core limits instead: one thread running
// the same decode+transform in a tight loop over files held in memory, and the full decode
// alone (libjpeg-turbo or libpng).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "stoker/loader/copy_transform.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/image_source.hpp"
#include "stoker/loader/image_transforms.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/loader/tar_source.hpp"
#include "stoker/loader/token_source.hpp"

namespace stoker::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A stand-in for a GPU training step: the consumer's thread mostly waits for the device.
void step(double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

struct Common {
  size_t batch_size = 0;
  uint64_t batches = 0;  // 0: whole epochs
  uint64_t epochs = 2;
  int workers = 0, prefetch = 0, max_depth = 0;
  double step_ms = 0;  // simulated training step per batch
  uint64_t world_size = 0, rank = 0, seed = 0;
  uint64_t shuffle_buffer = 0;  // streamed shards; 0: the plan's
  bool json = false, fixed_depth = false;
  std::string on_corrupt = "error";
  double max_skip_fraction = 0.01;
  bool drop_cache_flag = false;
  std::vector<std::string> drop_cache;  // with --drop-cache: the dataset's files and folders
};

// Drops the page cache of every file under `paths` (posix_fadvise DONTNEED), so that the
// run reads from storage even right after the source's index pass read the files.
void drop_page_cache(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  auto drop = [](const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      drop(p);
      continue;
    }
    for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
      if (e.is_regular_file()) drop(e.path());
    }
  }
}

// This process's reads as the kernel counts them (/proc/self/io): read() calls, bytes they
// returned, and bytes fetched from storage (not from the page cache).
struct IoCounters {
  uint64_t syscr = 0, rchar = 0, read_bytes = 0;
};

IoCounters io_counters() {
  IoCounters c;
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return c;
  char key[32];
  unsigned long long v = 0;
  while (std::fscanf(f, "%31[^:]: %llu ", key, &v) == 2) {
    if (std::strcmp(key, "syscr") == 0) c.syscr = v;
    if (std::strcmp(key, "rchar") == 0) c.rchar = v;
    if (std::strcmp(key, "read_bytes") == 0) c.read_bytes = v;
  }
  std::fclose(f);
  return c;
}

// The first `n` samples of a source: --batches N runs whole (short) epochs, so the next
// epoch's first batches are still prepared while the current one drains.
class FirstN final : public Source {
 public:
  FirstN(std::shared_ptr<const Source> s, uint64_t n) : s_(std::move(s)), n_(n) {}
  uint64_t size() const override { return n_; }
  RawSample read(uint64_t i, std::vector<std::byte>& scratch) const override {
    return s_->read(i, scratch);
  }
  std::string location(uint64_t i) const override { return s_->location(i); }
  uint64_t fingerprint() const override { return s_->fingerprint() ^ (n_ * 0x9e3779b97f4a7c15ULL); }
  std::string describe() const override {
    return s_->describe() + " (first " + std::to_string(n_) + " samples)";
  }

 private:
  std::shared_ptr<const Source> s_;
  uint64_t n_;
};

void add_common(CLI::App* cmd, Common& c, size_t default_batch) {
  c.batch_size = default_batch;
  cmd->add_option("--batch-size", c.batch_size, "Samples per batch")->capture_default_str();
  cmd->add_option("--batches", c.batches,
                  "Batches per epoch (the dataset is cut to that many; default: whole epochs)");
  cmd->add_option("--epochs", c.epochs, "Epochs to run")->capture_default_str();
  cmd->add_option("--workers", c.workers, "Worker threads (default: the plan's)");
  cmd->add_option("--prefetch", c.prefetch, "Starting ring depth in batches (default: the plan's)");
  cmd->add_flag("--fixed-depth", c.fixed_depth, "Keep the ring depth (no controller)");
  cmd->add_option("--max-depth", c.max_depth, "Cap on the ring depth (default: the loader's)");
  cmd->add_option("--step-ms", c.step_ms,
                  "Simulated GPU training step: the consumer sleeps this long per batch");
  cmd->add_option("--world-size", c.world_size, "Ranks (default: detected: MPI, RANK/WORLD_SIZE, Slurm)");
  cmd->add_option("--rank", c.rank, "This rank (with --world-size)");
  cmd->add_option("--seed", c.seed, "Shuffle and augmentation seed")->capture_default_str();
  cmd->add_flag("--json", c.json, "Print one JSON object");
  cmd->add_option("--on-corrupt", c.on_corrupt,
                  "error: stop at a corrupt sample; skip: leave it out (named once, counted)")
      ->check(CLI::IsMember({"error", "skip"}))
      ->capture_default_str();
  cmd->add_option("--max-skip-fraction", c.max_skip_fraction,
                  "With --on-corrupt=skip: stop when more of an epoch's samples are corrupt")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--drop-cache", c.drop_cache_flag,
                "Drop the dataset's page cache before the run (cold reads from storage)");
}

// The run's reads: read() calls and bytes (/proc/self/io), and a streamed source's shard reads.
json read_report(const IoCounters& a, const IoCounters& b, double wall, const ReadCounters& stream) {
  return {{"io",
           {{"read_calls", b.syscr - a.syscr},
            {"read_calls_per_s", static_cast<double>(b.syscr - a.syscr) / wall},
            {"read_call_bytes", b.rchar - a.rchar},
            {"storage_read_bytes", b.read_bytes - a.read_bytes}}},
          {"stream_reads",
           {{"reads", stream.reads}, {"bytes", stream.bytes}, {"largest", stream.largest}}}};
}

void print_reads(const IoCounters& a, const IoCounters& b, double wall,
                 const ReadCounters& stream) {
  std::printf("  reads      %llu read() calls (%.0f/s) returning %.1f MiB, %.1f MiB from storage\n",
              static_cast<unsigned long long>(b.syscr - a.syscr),
              static_cast<double>(b.syscr - a.syscr) / wall,
              static_cast<double>(b.rchar - a.rchar) / (1 << 20),
              static_cast<double>(b.read_bytes - a.read_bytes) / (1 << 20));
  if (stream.reads > 0) {
    std::printf("  stream     %llu shard reads of %.2f MiB on average (largest %.2f MiB)\n",
                static_cast<unsigned long long>(stream.reads),
                static_cast<double>(stream.bytes) / static_cast<double>(stream.reads) / (1 << 20),
                static_cast<double>(stream.largest) / (1 << 20));
  }
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
  return buf;
}

// Runs the loader and prints the report; `extra` is merged into the JSON.
void run_bench(const char* what, std::shared_ptr<const Source> source,
               std::shared_ptr<const Transform> transform, const Common& c,
               double input_bytes_per_sample, json extra) {
  if (c.batch_size == 0) throw Error("--batch-size", "must be > 0");
  if (c.epochs == 0) throw Error("--epochs", "must be > 0");
  if (c.world_size == 0 && c.rank != 0) throw Error("--rank", "needs --world-size");
  // A streamed source is read shard by shard: cutting it to its first samples would make
  // it a by-index source; its epochs stop after --batches instead.
  const auto* shards = dynamic_cast<const ShardStreamSource*>(source.get());
  const bool streamed = shards != nullptr && shards->streamed();
  if (c.batches > 0 && !streamed) {
    const uint64_t world = c.world_size ? c.world_size : 1;
    const uint64_t n = std::min(source->size(), c.batches * c.batch_size * world);
    source = std::make_shared<FirstN>(std::move(source), n);
  }
  PlanRequest req;
  if (c.workers > 0) req.overrides.workers = c.workers;
  if (c.prefetch > 0) req.overrides.prefetch = c.prefetch;
  req.batch_bytes = transform->output_spec().bytes() * c.batch_size;
  LocalPlan lp = plan_this_process(req);
  std::string spread;
  if (c.workers > lp.plan.worker_cpus.count()) {
    // More workers than the plan's worker cores: let them use every CPU of the process
    // rather than crowd onto the worker cores (the main thread only waits here).
    spread = std::to_string(c.workers) + " workers > " +
             std::to_string(lp.plan.worker_cpus.count()) + " worker CPUs (" +
             lp.plan.worker_cpus.to_string() + "): workers spread over all CPUs " +
             lp.plan.cpus.to_string();
    lp.plan.worker_cpus = lp.plan.cpus;
  }

  LoaderOptions o;
  o.batch_size = c.batch_size;
  o.seed = c.seed;
  o.world_size = c.world_size;
  o.rank = c.rank;
  o.workers = c.workers;
  o.prefetch = c.prefetch;
  o.adaptive = !c.fixed_depth;
  if (c.max_depth > 0) o.max_depth = c.max_depth;
  o.on_corrupt = c.on_corrupt == "skip" ? CorruptPolicy::Skip : CorruptPolicy::Error;
  o.max_skip_fraction = c.max_skip_fraction;
  o.corrupt_names = {"--on-corrupt=skip", "--max-skip-fraction"};
  o.shuffle_buffer = c.shuffle_buffer;
  o.plan = lp.plan;
  drop_page_cache(c.drop_cache);
  const auto t_construct = Clock::now();
  Loader loader(source, transform, o);
  const double construct_s = seconds_since(t_construct);

  std::vector<double> first_ms, epoch_rate;
  uint64_t samples = 0;
  const IoCounters io0 = io_counters();
  const auto t0 = Clock::now();
  for (uint64_t e = 0; e < c.epochs; ++e) {
    loader.set_epoch(e);
    const auto te = Clock::now();
    uint64_t n = 0;
    bool first = true;
    for (Batch& b : loader) {
      if (first) {
        first_ms.push_back(seconds_since(te) * 1e3);
        first = false;
      }
      n += b.size();
      if (c.step_ms > 0) step(c.step_ms);
      if (streamed && c.batches > 0 && n >= c.batches * c.batch_size) break;
    }
    epoch_rate.push_back(static_cast<double>(n) / seconds_since(te));
    samples += n;
  }
  const double wall = seconds_since(t0);
  const IoCounters io1 = io_counters();
  const LoaderStats st = loader.stats();
  const double rate = static_cast<double>(samples) / wall;
  const double out_bytes_s = static_cast<double>(st.bytes) / wall;
  const auto per_sample_ms = [&](uint64_t ns) {
    return samples ? static_cast<double>(ns) / 1e6 / static_cast<double>(samples) : 0.0;
  };
  const DistributedSampler& sampler = loader.sampler();
  std::vector<uint64_t> first_indices;
  for (uint64_t i = 0; i < std::min<uint64_t>(8, sampler.length()); ++i) {
    first_indices.push_back(sampler.at(i));
  }

  json j = {
      {"what", what},
      {"source", source->describe()},
      {"transform", transform->describe()},
      {"plan_source", lp.source},
      {"batch_size", c.batch_size},
      {"epochs", c.epochs},
      {"samples", samples},
      {"wall_s", wall},
      {"construct_s", construct_s},
      {"samples_per_s", rate},
      {"epoch_samples_per_s", epoch_rate},
      {"bytes_per_s", out_bytes_s},
      {"input_bytes_per_s", rate * input_bytes_per_sample},
      {"epoch_first_batch_ms", first_ms},
      {"wait_share", st.wait_share},
      {"peak_rss_bytes", peak_rss_bytes()},
      {"workers", st.workers},
      {"worker_cpus", lp.plan.worker_cpus.to_string()},
      {"prefetch_start", c.prefetch > 0 ? c.prefetch : lp.plan.prefetch},
      {"prefetch_final", st.depth},
      {"prefetch_max", st.max_depth},
      {"depth_changes", st.depth_history.size()},
      {"threads_created", st.threads_created},
      {"stage_ms_per_sample",
       {{"read", per_sample_ms(st.stages.read_ns)},
        {"decode", per_sample_ms(st.stages.decode_ns)},
        {"transform", per_sample_ms(st.stages.transform_ns)},
        {"collate", per_sample_ms(st.stages.collate_ns)},
        {"consumer_wait", per_sample_ms(st.consumer_wait_ns)}}},
      {"skipped", st.skipped},
      {"skipped_files", st.skipped_files},
      {"world_size", sampler.options().world_size},
      {"rank", sampler.options().rank},
      {"shard_samples", sampler.length()},
      {"shard_first_indices", first_indices},
      {"step_ms", c.step_ms},
      {"notes", st.notes},
  };
  j.update(read_report(io0, io1, wall, st.stream_reads));
  if (!spread.empty()) j["notes"].push_back(spread);
  j.update(extra);
  if (c.json) {
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("stoker bench %s\n", what);
  std::printf("  source     %s\n", source->describe().c_str());
  std::printf("  transform  %s\n", transform->describe().c_str());
  std::printf("  plan       %s: %d workers on CPUs %s, prefetch %d, budget %.1f MiB\n",
              lp.source.c_str(), st.workers, lp.plan.worker_cpus.to_string().c_str(),
              c.prefetch > 0 ? c.prefetch : lp.plan.prefetch,
              static_cast<double>(lp.plan.mem_budget) / (1 << 20));
  std::printf("  shard      rank %llu of %llu: %llu samples per epoch, first indices",
              static_cast<unsigned long long>(sampler.options().rank),
              static_cast<unsigned long long>(sampler.options().world_size),
              static_cast<unsigned long long>(sampler.length()));
  for (uint64_t i : first_indices) std::printf(" %llu", static_cast<unsigned long long>(i));
  std::printf("\n  throughput %.0f samples/s, %.1f MB/s out, %.1f MB/s in (%llu samples in %.2f s, "
              "batch %zu)\n",
              rate, out_bytes_s / 1e6, rate * input_bytes_per_sample / 1e6,
              static_cast<unsigned long long>(samples), wall, c.batch_size);
  std::printf("  epochs    ");
  for (size_t e = 0; e < first_ms.size(); ++e) {
    std::printf(" [%zu] first batch %s, %.0f samples/s", e, ms(first_ms[e] / 1e3).c_str(),
                epoch_rate[e]);
  }
  std::printf("\n  stages     per sample (summed over workers): read %.3f ms, decode %.3f ms, "
              "transform %.3f ms, collate %.3f ms\n",
              per_sample_ms(st.stages.read_ns), per_sample_ms(st.stages.decode_ns),
              per_sample_ms(st.stages.transform_ns), per_sample_ms(st.stages.collate_ns));
  std::printf("  consumer   waited %.1f %% of the time (%.3f ms per sample)\n",
              st.wait_share * 100, per_sample_ms(st.consumer_wait_ns));
  if (st.skipped > 0) {
    std::printf("  corrupt    %llu samples skipped (files named on stderr)\n",
                static_cast<unsigned long long>(st.skipped));
  }
  std::printf("  prefetch   depth %d at the end (max %d by the budget), %zu changes\n", st.depth,
              st.max_depth, st.depth_history.size());
  for (size_t i = st.depth_history.size() > 6 ? st.depth_history.size() - 6 : 0;
       i < st.depth_history.size(); ++i) {
    std::printf("             %s\n", st.depth_history[i].describe().c_str());
  }
  print_reads(io0, io1, wall, st.stream_reads);
  std::printf("  memory     peak RSS %.1f MiB, arena %.1f MiB%s\n",
              static_cast<double>(peak_rss_bytes()) / (1 << 20),
              static_cast<double>(st.arena_bytes) / (1 << 20), st.pinned ? " (pinned)" : "");
  if (!spread.empty()) std::printf("  note       %s\n", spread.c_str());
  for (const auto& n : st.notes) std::printf("  note       %s\n", n.c_str());
}

// --- images ---------------------------------------------------------------------------

struct ImageArgs {
  Common c;
  std::vector<std::string> paths;
  int size = 224;
  std::string dtype = "float32", layout = "CHW";
  bool eval = false, limit = false, stream = false, no_labels = false;
  double seconds = 3;
};

// Tar shards when a path is a file or a folder holding shards; else an image folder.
// Shards are streamed with --stream, under a profile that says Stream=yes, or when one is
// compressed (.tar.gz, .tar.zst: they cannot be read by random access).
std::shared_ptr<const Source> open_images(const ImageArgs& a) {
  bool tar = a.paths.size() > 1;
  for (const auto& p : a.paths) {
    std::error_code ec;
    tar = tar || !std::filesystem::is_directory(p, ec);
    for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
      tar = tar || (e.is_regular_file() && is_tar_shard_name(e.path().string()));
    }
  }
  if (!tar) return std::make_shared<ImageFolderSource>(a.paths.front());
  TarShardOptions o;
  o.labels = !a.no_labels;
  o.stream = a.stream || plan_this_process().plan.stream;
  const std::vector<std::string> shards = list_tar_shards(a.paths);
  for (const auto& s : shards) o.stream = o.stream || is_compressed_shard_name(s);
  return std::make_shared<TarShardSource>(shards, o);
}

double avg_input_bytes(const Source& s) {
  if (const auto* f = dynamic_cast<const ImageFolderSource*>(&s)) {
    return static_cast<double>(f->bytes()) / static_cast<double>(f->size());
  }
  if (const auto* t = dynamic_cast<const TarShardSource*>(&s)) {
    return static_cast<double>(t->bytes()) / static_cast<double>(t->size());
  }
  return 0;
}

// The per-core limits: one thread, files already in memory.
void run_limit(const ImageArgs& a, const Source& src, const Transform& t) {
  std::vector<std::vector<std::byte>> files;
  std::vector<std::byte> scratch;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < src.size() && bytes < (512u << 20); ++i) {
    const RawSample s = src.read(i, scratch);
    files.emplace_back(s.bytes.begin(), s.bytes.end());
    bytes += s.bytes.size();
  }
  std::vector<std::byte> out(t.output_spec().bytes());
  Scratch sc;
  StageTimes times;
  // Pipeline: decode + crop + resize + flip + normalize, as the workers run it.
  uint64_t n = 0;
  auto start = Clock::now();
  while (seconds_since(start) < a.seconds || n < files.size()) {
    t.apply({files[n % files.size()], 0}, {a.c.seed, 0, n}, out.data(), sc, times);
    ++n;
  }
  const double pipeline = static_cast<double>(n) / seconds_since(start);
  // The full decode alone (libjpeg-turbo or libpng, to RGB).
  uint64_t m = 0;
  start = Clock::now();
  while (seconds_since(start) < a.seconds || m < files.size()) {
    (void)decode_rgb(files[m % files.size()]);
    ++m;
  }
  const double decode = static_cast<double>(m) / seconds_since(start);
  PlanRequest req;
  if (a.c.workers > 0) req.overrides.workers = a.c.workers;
  const int cores = a.c.workers > 0 ? a.c.workers : plan_this_process(req).plan.workers;
  json j = {{"what", "images limit"},
            {"files_in_memory", files.size()},
            {"transform", t.describe()},
            {"pipeline_per_thread", pipeline},
            {"decode_ms", static_cast<double>(times.decode_ns) / 1e6 / static_cast<double>(n)},
            {"transform_ms", static_cast<double>(times.transform_ns) / 1e6 / static_cast<double>(n)},
            {"full_decode_per_thread", decode},
            {"cores", cores},
            {"pipeline_limit", pipeline * cores},
            {"full_decode_limit", decode * cores}};
  if (a.c.json) {
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("stoker bench images --limit (%zu files in memory, one thread, %.0f s each)\n",
              files.size(), a.seconds);
  std::printf("  pipeline    %.0f img/s per thread (decode %.3f ms + transform %.3f ms); x %d "
              "cores = %.0f img/s\n",
              pipeline, j["decode_ms"].get<double>(), j["transform_ms"].get<double>(), cores,
              pipeline * cores);
  std::printf("  full decode %.0f img/s per thread (whole image, RGB); x %d cores = %.0f img/s\n",
              decode, cores, decode * cores);
}

void run_images(ImageArgs a) {
  auto src = open_images(a);
  if (a.c.drop_cache_flag) a.c.drop_cache = a.paths;
  ImageTransformOptions o;
  o.train = !a.eval;
  o.size = a.size;
  o.resize_shorter = (a.size * 256 + 112) / 224;  // ImageNet's 256 for 224
  if (a.dtype == "float32") {
    o.dtype = DType::F32;
  } else if (a.dtype == "float16") {
    o.dtype = DType::F16;
  } else if (a.dtype == "uint8") {
    o.dtype = DType::U8;
  } else {
    throw Error("--dtype", "unknown dtype '" + a.dtype + "'", "use float32, float16 or uint8");
  }
  if (a.layout != "CHW" && a.layout != "HWC") {
    throw Error("--layout", "unknown layout '" + a.layout + "'", "use CHW or HWC");
  }
  o.layout = a.layout == "CHW" ? Layout::CHW : Layout::HWC;
  std::shared_ptr<const Transform> t = make_image_transform(o);
  if (a.limit) return run_limit(a, *src, *t);
  run_bench("images", src, t, a.c, avg_input_bytes(*src), {{"size", a.size}});
}

// --- tokens ---------------------------------------------------------------------------

struct TokenArgs {
  Common c;
  std::vector<std::string> paths;
  std::string dtype;  // "": from the .npy headers, else uint16
  uint64_t seq_len = 2048;
};

void run_tokens(TokenArgs a) {
  if (a.c.drop_cache_flag) a.c.drop_cache = a.paths;
  std::optional<DType> dt;
  if (a.dtype == "uint16") {
    dt = DType::U16;
  } else if (a.dtype == "uint32") {
    dt = DType::U32;
  } else if (!a.dtype.empty()) {
    throw Error("--dtype", "unknown token dtype '" + a.dtype + "'", "use uint16 or uint32");
  }
  auto src = std::make_shared<TokenFileSource>(a.paths, a.seq_len, dt);
  auto t = std::make_shared<CopyTransform>(src->spec());
  run_bench("tokens", src, t, a.c, static_cast<double>(src->spec().bytes()),
            {{"seq_len", a.seq_len}, {"tokens", src->tokens()}});
}

}  // namespace

const Command bench_command(40, [](CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Measure the loader on a dataset (images, tokens)");
  bench->require_subcommand(1);

  auto ia = std::make_shared<ImageArgs>();
  CLI::App* img = bench->add_subcommand(
      "images", "JPEG/PNG pipeline: RandomResizedCrop + flip + normalize (or --eval), batched");
  img->add_option("DIR", ia->paths,
                  "Image folder (ImageNet layout), or tar shards (.tar, .tar.gz, .tar.zst) / "
                  "folders of them")
      ->required();
  add_common(img, ia->c, 64);
  img->add_flag("--stream", ia->stream,
                "Stream the tar shards: whole shards in 4 MiB reads through a shuffle buffer "
                "(default: the profile's Stream; always for compressed shards)");
  img->add_option(
      "--shuffle-buffer", ia->c.shuffle_buffer,
      "Streamed shards: samples held to shuffle (default: the profile's ShuffleBuffer)");
  img->add_flag("--no-labels", ia->no_labels,
                "Tar shards without label members: every label is -1");
  img->add_option("--size", ia->size, "Output height and width")->capture_default_str();
  img->add_option("--dtype", ia->dtype, "float32, float16 or uint8")->capture_default_str();
  img->add_option("--layout", ia->layout, "CHW or HWC")->capture_default_str();
  img->add_flag("--eval", ia->eval, "Resize(size*256/224) + CenterCrop(size) instead of the train pipeline");
  img->add_flag("--limit", ia->limit,
                "Measure the per-core limits instead (one thread, files in memory)");
  img->add_option("--seconds", ia->seconds, "With --limit: seconds per measurement")
      ->capture_default_str();
  img->callback([ia] { run_images(*ia); });

  auto ta = std::make_shared<TokenArgs>();
  CLI::App* tok = bench->add_subcommand("tokens", "Token windows of seq_len+1 from token files");
  tok->add_option("FILE", ta->paths,
                  "Token files (flat uint16/uint32, or 1-D .npy) or folders of them: one set")
      ->required();
  add_common(tok, ta->c, 16);
  tok->add_option("--seq-len", ta->seq_len, "Tokens per window (+1 for the targets)")
      ->capture_default_str();
  tok->add_option("--dtype", ta->dtype,
                  "uint16 or uint32 (default: the .npy headers', else uint16)");
  tok->callback([ta] { run_tokens(*ta); });
});

}  // namespace stoker::cli
