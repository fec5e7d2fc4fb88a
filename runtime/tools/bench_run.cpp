// `stoker bench images|tokens`: runs the loader for this process over a real dataset and
// reports throughput, where the time went, the consumer's wait share, peak RSS, what the
// prefetch controller chose, and the first-batch time of every epoch. Four steps: the
// options (the loader's by its table, loader_fields()), open the loader on the dataset
// (Loader::open plans and opens it), run, report.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/loader/loader_fields.hpp"
#include "stoker/loader/measure_values.hpp"
#include "stoker/loader/worker_shares.hpp"
#include "stoker/sources/shard_stream.hpp"

namespace stoker::cli {

namespace {

using nlohmann::json;

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
  return buf;
}

bool streamed(const Source& source) {
  const auto* shards = dynamic_cast<const ShardStreamSource*>(&source);
  return shards != nullptr && shards->streamed();
}

// The flag of a row of loader_fields(): --batch-size for batch_size.
std::string flag_of(const char* name) {
  std::string flag = std::string("--") + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// A stand-in for a GPU training step: the consumer's thread mostly waits for the device.
void step(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

struct Measured {
  double construct_s = 0, wall_s = 0;
  uint64_t samples = 0;
  std::vector<double> first_ms, epoch_rate;
  IoCounters io_before, io_after;
};

// Step 3: the epochs, timed, with the reads they made.
Measured run_epochs(Loader& loader, const Common& c, size_t batch_size, double construct_s,
                    bool stop_early) {
  Measured m;
  m.construct_s = construct_s;
  m.io_before = io_counters();
  const auto t0 = Clock::now();
  for (uint64_t e = 0; e < c.epochs; ++e) {
    loader.set_epoch(e);
    const auto te = Clock::now();
    uint64_t n = 0;
    bool first = true;
    for (Batch& b : loader) {
      if (std::exchange(first, false)) m.first_ms.push_back(seconds_since(te) * 1e3);
      n += b.size();
      if (c.step_ms > 0) step(c.step_ms);
      if (stop_early && n >= c.batches * batch_size) break;
    }
    m.epoch_rate.push_back(static_cast<double>(n) / seconds_since(te));
    m.samples += n;
  }
  m.wall_s = seconds_since(t0);
  m.io_after = io_counters();
  return m;
}

// The CPUs the workers run on (worker_shares: beyond the plan's worker CPUs they spread).
std::string worker_cpus(const Loader& loader, int workers) {
  CpuSet used;
  for (const CpuSet& share : worker_shares(loader.plan(), workers)) used = used | share;
  return used.to_string();
}

// Every quantity of the table of what a run measures, by its name, in its base unit.
json measured(const LoaderStats& st) {
  json out = json::object();
  for (const MeasureRow& row : run_measures()) {
    std::visit([&](auto v) { out[row.name] = v; }, base_value(measure_value(st, row.id), row.unit));
  }
  return out;
}

// Step 4a: everything measured, as one JSON object.
json report(const char* what, const Source& source, const Transform& transform, const Common& c,
            const Loader& loader, const LoaderStats& st, const Measured& m) {
  const auto per_sample_ms = [&](uint64_t ns) {
    return m.samples ? static_cast<double>(ns) / 1e6 / static_cast<double>(m.samples) : 0.0;
  };
  const DistributedSampler& sampler = loader.sampler();
  std::vector<uint64_t> first_indices;
  for (uint64_t i = 0; i < std::min<uint64_t>(8, sampler.length()); ++i)
    first_indices.push_back(sampler.at(i));
  const Plan& plan = loader.plan();
  const double rate = static_cast<double>(m.samples) / m.wall_s;
  return {
      {"what", what},
      {"source", source.describe()},
      {"transform", transform.describe()},
      {"plan_source", loader.plan_source()},
      {"batch_size", c.loader_options().batch_size},
      {"epochs", c.epochs},
      {"samples", m.samples},
      {"wall_s", m.wall_s},
      {"construct_s", m.construct_s},
      {"samples_per_s", rate},
      {"epoch_samples_per_s", m.epoch_rate},
      {"bytes_per_s", static_cast<double>(st.bytes) / m.wall_s},
      {"epoch_first_batch_ms", m.first_ms},
      {"wait_share", st.wait_share},
      {"peak_rss_bytes", peak_rss_bytes()},
      {"workers", st.workers},
      {"worker_cpus", worker_cpus(loader, st.workers)},
      {"mem_budget", plan.mem_budget},
      {"prefetch_plan", plan.prefetch},
      {"prefetch_plan_max", plan.prefetch_max},
      {"prefetch_start", st.depth_history.empty() ? st.depth : st.depth_history.front().to},
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
      {"measured", measured(st)},
  };
}

// Step 4b: the same for a reader.
void print_report(const json& j, const LoaderStats& st) {
  const auto text = [&](const char* key) { return j[key].get<std::string>(); };
  const auto num = [&](const char* key) { return j[key].get<double>(); };
  const auto stage = [&](const char* key) { return j["stage_ms_per_sample"][key].get<double>(); };
  std::printf("stoker bench %s\n", text("what").c_str());
  std::printf("  source     %s\n", text("source").c_str());
  std::printf("  transform  %s\n", text("transform").c_str());
  std::printf("  plan       %s: %d workers on CPUs %s, prefetch %d (up to %d), budget %.1f MiB\n",
              text("plan_source").c_str(), st.workers, text("worker_cpus").c_str(),
              j["prefetch_plan"].get<int>(), j["prefetch_plan_max"].get<int>(),
              num("mem_budget") / (1 << 20));
  std::printf("  shard      rank %llu of %llu: %llu samples per epoch, first indices",
              j["rank"].get<unsigned long long>(), j["world_size"].get<unsigned long long>(),
              j["shard_samples"].get<unsigned long long>());
  for (uint64_t i : j["shard_first_indices"])
    std::printf(" %llu", static_cast<unsigned long long>(i));
  std::printf(
      "\n  throughput %.0f samples/s, %.1f MB/s out, %.1f MB/s in (%llu samples in %.2f s, "
      "batch %zu)\n",
      num("samples_per_s"), num("bytes_per_s") / 1e6, num("input_bytes_per_s") / 1e6,
      j["samples"].get<unsigned long long>(), num("wall_s"), j["batch_size"].get<size_t>());
  std::printf("  epochs    ");
  for (size_t e = 0; e < j["epoch_first_batch_ms"].size(); ++e) {
    std::printf(" [%zu] first batch %s, %.0f samples/s", e,
                ms(j["epoch_first_batch_ms"][e].get<double>() / 1e3).c_str(),
                j["epoch_samples_per_s"][e].get<double>());
  }
  std::printf(
      "\n  stages     per sample (summed over workers): read %.3f ms, decode %.3f ms, "
      "transform %.3f ms, collate %.3f ms\n",
      stage("read"), stage("decode"), stage("transform"), stage("collate"));
  std::printf("  consumer   waited %.1f %% of the time (%.3f ms per sample)\n",
              num("wait_share") * 100, stage("consumer_wait"));
  if (st.skipped > 0) {
    std::printf("  corrupt    %llu samples skipped (files named on stderr)\n",
                static_cast<unsigned long long>(st.skipped));
  }
  std::printf("  prefetch   depth %d at the end (started at %d, at most %d), %zu changes\n",
              st.depth, j["prefetch_start"].get<int>(), st.max_depth, st.depth_history.size());
  for (size_t i = st.depth_history.size() > 6 ? st.depth_history.size() - 6 : 0;
       i < st.depth_history.size(); ++i) {
    std::printf("             %s\n", st.depth_history[i].describe().c_str());
  }
  print_reads(j);
  std::printf("  memory     peak RSS %.1f MiB, arena %.1f MiB%s\n",
              num("peak_rss_bytes") / (1 << 20), static_cast<double>(st.arena_bytes) / (1 << 20),
              st.pinned ? " (pinned)" : "");
  for (const auto& n : st.notes) std::printf("  note       %s\n", n.c_str());
}

}  // namespace

void add_common(CLI::App* cmd, Common& c, size_t default_batch) {
  c.loader_flags["batch_size"] = std::to_string(default_batch);
  for (const OptionField<LoaderOptions>& row : loader_fields()) {
    if (!row.bench) continue;
    const std::string help =
        row.none ? std::string(row.help) + " (default: " + row.none + ")" : std::string(row.help);
    CLI::Option* o = cmd->add_option(flag_of(row.name), c.loader_flags[row.name], help);
    // A whole number's type: main.cpp refuses a negative one by it, naming the flag.
    if (row.kind == OptionKind::Whole) o->type_name("UINT");
    if (!c.loader_flags[row.name].empty()) o->capture_default_str();
  }
  cmd->add_option("--batches", c.batches,
                  "Batches per epoch (the dataset is cut to that many; default: whole epochs)");
  cmd->add_option("--epochs", c.epochs, "Epochs to run")->capture_default_str();
  cmd->add_flag("--fixed-depth", c.fixed_depth, "Keep the ring depth (no controller)");
  cmd->add_option("--step-ms", c.step_ms,
                  "Simulated GPU training step: the consumer sleeps this long per batch");
  cmd->add_flag("--json", c.json, "Print one JSON object");
  cmd->add_flag("--drop-cache", c.drop_cache_flag,
                "Drop the dataset's page cache before the run (cold reads from storage)");
}

LoaderOptions Common::loader_options() const {
  LoaderOptions o;
  for (const auto& [name, text] : loader_flags) {
    if (text.empty()) continue;
    const OptionField<LoaderOptions>& row = *find_option(loader_fields(), name);
    row.set(o, option_from_text(row, flag_of(row.name), text));
  }
  if (o.world_size == 0 && o.rank != 0) throw Error("--rank", "needs --world-size");
  o.adaptive = !fixed_depth;
  o.corrupt_names = {"--on-corrupt=skip", "--max-skip-fraction"};
  return o;
}

void run_bench(const char* what, DatasetSpec spec, const Common& c, json extra) {
  if (c.epochs == 0) throw Error("--epochs", "must be > 0");
  LoaderOptions options = c.loader_options();
  if (options.world_size == 0) {
    // stoker bench is an MPI program under an MPI launcher (srun --mpi=pmix, mpirun): its
    // ranks list an image folder once per job and agree over MPI (mpi_choice).
    const World w = detect_world(/*mpi_program=*/true);
    options.world_size = w.world_size;
    options.rank = w.rank;
  }
  // --batches N runs whole (short) epochs of the first samples, so the next epoch's first
  // batches are still prepared while the current one drains; a streamed source is read shard
  // by shard, so its epochs stop after N batches instead.
  if (c.batches > 0)
    spec.first_samples = c.batches * options.batch_size * std::max<uint64_t>(options.world_size, 1);
  drop_page_cache(c.drop_cache);
  const auto t_construct = Clock::now();
  std::unique_ptr<Loader> loader = Loader::open(spec, options);
  const Source& source = loader->source();
  const bool stop_early = streamed(source) && c.batches > 0;
  const Measured m =
      run_epochs(*loader, c, options.batch_size, seconds_since(t_construct), stop_early);
  const LoaderStats st = loader->stats();
  json j = report(what, source, loader->transform(), c, *loader, st, m);
  j.update(read_report(m.io_before, m.io_after, m.wall_s, st.stream_reads));
  j["input_bytes_per_s"] = j["samples_per_s"].get<double>() * source.bytes_per_sample();
  j.update(extra);
  if (c.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    print_report(j, st);
  }
}

}  // namespace stoker::cli
