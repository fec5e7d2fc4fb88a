#include "trainer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <numeric>
#include <string>

#include "dataset.hpp"
#include "grad_reduce.hpp"
#include "mlp.hpp"
#include "step_input.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_pinner.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/plan_env.hpp"
#if STOKER_HAVE_CUDA
#include <cuda_runtime.h>

#include "cuda_ops.hpp"
#include "stoker/cuda/cuda_feeder.hpp"
#endif

namespace stoker::train {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string rank_of(const World& w) {
  return "rank " + std::to_string(w.rank) + "/" + std::to_string(w.world_size);
}

// The rank before the world is known (an MPI initialisation failure), from the launcher.
std::string launcher_rank() {
  try {
    const Ranks r = launch_ranks(process_env());
    return "rank " + std::to_string(r.rank) + " (" + r.source + ")";
  } catch (const Error&) {
    return "rank ?";
  }
}

std::string host_name() {
  return node_name(process_env());  // Slurm's emulated nodes share a host name
}

struct DeviceChoice {
  bool gpu = false;
  int device = -1;
  std::string note;  // why the CPU (or which GPU)
};

// --device gpu with a plan that names no GPU (hwloc could not see the GPUs, e.g. in a
// container without PCI information): take CUDA device local_rank % count, as PyTorch's
// LOCAL_RANK convention does, and feed it from pinned memory.
void adopt_visible_gpu(Plan& plan, int local_rank) {
#if STOKER_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return;
  }
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, local_rank % n) != cudaSuccess) return;
  plan.gpu = id;
  for (char& c : plan.gpu) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  plan.pin_memory = true;
  plan.reasons.push_back({"gpu", "--device gpu: the plan named none; CUDA device " +
                                     std::to_string(local_rank % n) + " for local rank " +
                                     std::to_string(local_rank)});
#else
  (void)plan;
  (void)local_rank;
#endif
}

// The plan names the GPU; this decides whether it is used. A GPU that CUDA cannot use at
// all (no driver, a test cluster's fake GPUs) means the CPU path, said out loud; a GPU
// that CUDA sees but not the plan's is an error (plan_gpu throws).
DeviceChoice choose_device(Plan& plan, const std::string& want, int local_rank) {
  if (want != "auto" && want != "cpu" && want != "gpu") {
    throw Error("--device " + want, "is not auto, cpu or gpu");
  }
  if (want == "cpu") return {false, -1, "cpu (--device cpu)"};
  if (plan.gpu.empty() && want == "gpu") adopt_visible_gpu(plan, local_rank);
  if (plan.gpu.empty()) {
    if (want == "gpu") {
      throw Error("--device gpu", "the plan names no GPU and CUDA sees none",
                  "request one (--gpus-per-task=1) or use --device auto");
    }
    return {false, -1, "cpu (the plan names no GPU)"};
  }
  const GpuAvailability g = plan_gpu(plan);
  if (!g.usable) {
    if (want == "gpu") throw Error("--device gpu", "GPU " + plan.gpu + ": " + g.why);
    return {false, -1, "cpu (falling back to the CPU: GPU " + plan.gpu + ": " + g.why + ")"};
  }
  return {true, g.device, "gpu " + plan.gpu + " (CUDA device " + std::to_string(g.device) + ")"};
}

std::string plan_line(const Plan& p) {
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.0f MiB", static_cast<double>(p.mem_budget) / (1 << 20));
  return "cpus " + p.cpus.to_string() + " workers " + std::to_string(p.workers) + " (cpus " +
         p.worker_cpus.to_string() + ") prefetch " + std::to_string(p.prefetch) + " (up to " +
         std::to_string(p.prefetch_max) + ") budget " + budget + " gpu " +
         (p.gpu.empty() ? "none" : p.gpu) + " pin " + (p.pin_memory ? "yes" : "no");
}

// GPU resources of the run: the current device and the stream every step's work runs on.
struct GpuContext {
  void* stream = nullptr;
#if STOKER_HAVE_CUDA
  explicit GpuContext(const DeviceChoice& d) {
    if (!d.gpu) return;
    check(cudaSetDevice(d.device), "cudaSetDevice");
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    stream = s;
  }
  ~GpuContext() {
    if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  }
  static void check(cudaError_t e, const char* call) {
    if (e != cudaSuccess) throw Error("GPU", std::string(call) + ": " + cudaGetErrorString(e));
  }
#else
  explicit GpuContext(const DeviceChoice&) {}
#endif
};

std::string number(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", v);
  return s;
}

void say(const std::string& line) {
  std::printf("stoker_train: %s\n", line.c_str());
  std::fflush(stdout);
}

// Step 1: the world and the data, checked: every rank must be able to take a step. The
// data is opened under the rank's plan, made once the sample is known (`plan_for`).
Dataset checked_data(const TrainOptions& o, World& world, const PlanFor& plan_for) {
  try {
    world = detect_world(/*mpi_program=*/true);  // it calls MPI itself (grad_reduce.cpp)
  } catch (const Error& e) {
    throw Error(launcher_rank(), std::string("MPI initialisation failed: ") + e.what());
  }
  Dataset data = open_training_data(o, world.world_size, plan_for);
  const uint64_t global_batch = o.batch_size * world.world_size;
  if (o.batch_size == 0) throw Error("--batch-size", "is 0", "give 1 or more samples per rank");
  if (data.source->size() < global_batch) {
    throw Error("--data " + o.data,
                "has " + std::to_string(data.source->size()) +
                    " samples, fewer than one global batch (" + std::to_string(o.batch_size) +
                    " per rank x " + std::to_string(world.world_size) +
                    " ranks = " + std::to_string(global_batch) + "): no rank could take a step",
                "use a smaller --batch-size, fewer ranks, or more data");
  }
  return data;
}

// Step 2: the plugin's plan when it tuned this task; else one computed here, for this
// rank's place among the ranks on its node as the launcher says (launch_ranks: the same
// ranks MPI has).
Plan rank_plan(const TrainOptions& o, const World& world, const SampleSpec& sample) {
  Plan plan;
  std::string plan_source;
  if (std::optional<Plan> env = read_plan(process_env())) {
    plan = *env;
    plan_source = "the STOKER_* environment (the Slurm plugin)";
  } else {
    PlanRequest request;
    request.batch_bytes = o.batch_size * sample.bytes();
    LocalPlan local = plan_for_this_process(request);
    plan = local.plan;
    plan_source = local.source + " (no plugin plan)";
  }
  say(rank_of(world) + " (local " + std::to_string(world.local_rank) + "/" +
      std::to_string(world.local_size) + ", host " + host_name() + ", world from " + world.source +
      "): plan from " + plan_source + ": " + plan_line(plan));
  return plan;
}

// The factory takes the plan and world decided above; it fits the plan's depths to the
// batch, makes the ranks agree and starts STOKER_METRICS.
std::unique_ptr<Loader> make_loader(const TrainOptions& o, const World& world, const Dataset& data,
                                    const Plan& plan, bool gpu) {
  LoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.drop_last = true;  // every rank takes the same number of full steps
  lo.seed = o.seed;
  lo.world_size = world.world_size;
  lo.rank = world.rank;
  lo.workers = o.workers;
  lo.prefetch = o.prefetch;
  lo.plan = plan;
  if (gpu) {
    lo.pinner = make_host_pinner(plan);
#if STOKER_HAVE_CUDA
    lo.held_batches = DeviceFeeder::kDefaultDepth + 1;
#endif
  }
  return Loader::for_this_process(data.source, data.transform, lo);
}

// What one rank's steps need.
struct Step {
  MathOps& ops;
  StepInput& input;
  Mlp& model;
  GradReducer& reducer;
  const Dataset& data;
  float* feats;      // the token task's per-step features and targets
  int64_t* targets;  // (the image task uses the batch as is)
  float lr;
};

struct Totals {
  uint64_t steps = 0, samples = 0;
  double first_loss = 0, wait_s = 0;
  std::deque<double> recent;  // the last losses, for a less noisy "last"
};

// Step 3: one epoch of steps (up to --max-steps in all); returns its (loss sum, steps).
std::pair<double, uint64_t> train_epoch(const TrainOptions& o, Step& s, Totals& t) {
  const size_t kRecent = 10;
  double epoch_loss = 0;
  uint64_t epoch_steps = 0;
  while (!o.max_steps || t.steps < o.max_steps) {
    const auto t0 = Clock::now();
    std::optional<StepBatch> b = s.input.next();
    t.wait_s += seconds(Clock::now() - t0);
    if (!b) break;
    const float* x = static_cast<const float*>(b->data);
    const int64_t* labels = b->labels;
    if (s.data.tokens) {
      s.ops.bag_of_tokens(b->data, s.data.u32, b->size, s.data.seq_len, s.data.inputs, s.feats,
                          s.targets);
      x = s.feats;
      labels = s.targets;
    }
    const float loss = s.model.forward_backward(x, labels, b->size);
    s.reducer.mean(s.model.grads(), s.model.size());
    s.model.step(s.lr);
    s.input.done();
    if (t.steps == 0) t.first_loss = loss;
    t.recent.push_back(loss);
    if (t.recent.size() > kRecent) t.recent.pop_front();
    epoch_loss += loss;
    ++epoch_steps;
    ++t.steps;
    t.samples += static_cast<uint64_t>(b->size);
  }
  return {epoch_loss, epoch_steps};
}

// Step 4: the run's figures over all ranks; the leader prints them.
void report(const World& world, const Totals& t, double elapsed_s, bool gpu) {
  const double wall = max_over_ranks(world, elapsed_s);
  const double share_mine = t.wait_s / std::max(1e-9, elapsed_s);
  const double share_mean = mean_over_ranks(world, share_mine);
  const double share_max = max_over_ranks(world, share_mine);
  const double first = mean_over_ranks(world, t.first_loss);
  const double last = mean_over_ranks(
      world, t.recent.empty()
                 ? 0.0
                 : std::accumulate(t.recent.begin(), t.recent.end(), 0.0) / t.recent.size());
  const double global_samples = static_cast<double>(t.samples) * world.world_size;
  if (world.rank != 0) return;
  char line[400];
  std::snprintf(line, sizeof line,
                "done: %llu steps, %.0f samples in %.2f s = %.1f samples/s; loss first %.4f "
                "last %.4f; input wait %.1f%% of step time (mean over ranks; max %.1f%%); "
                "device %s",
                static_cast<unsigned long long>(t.steps), global_samples, wall,
                global_samples / std::max(1e-9, wall), first, last, 100 * share_mean,
                100 * share_max, gpu ? "gpu" : "cpu");
  // The wait is host time in next(). On a GPU the step's kernels also wait for their copy
  // (wait_on() queues that wait on the stream), and no host clock sees it: said, not hidden.
  say(std::string(line) +
      (gpu ? "; input wait is host time in next(): GPU-side waits for the copies are not in it"
           : ""));
}

}  // namespace

void run(const TrainOptions& o, World& world) {
  Plan plan;
  const Dataset data = checked_data(o, world, [&](const SampleSpec& sample) -> const Plan& {
    plan = rank_plan(o, world, sample);
    return plan;
  });
  const bool leader = world.rank == 0;
  const DeviceChoice device = choose_device(plan, o.device, static_cast<int>(world.local_rank));
  say(rank_of(world) + ": device " + device.note);
  GpuContext gpu(device);
  std::unique_ptr<Loader> loader = make_loader(o, world, data, plan, device.gpu);

  std::unique_ptr<MathOps> ops;
  std::unique_ptr<StepInput> input;
#if STOKER_HAVE_CUDA
  if (device.gpu) {
    ops = make_cuda_ops(device.device, plan.gpu, gpu.stream);
    input = device_input(*loader, gpu.stream);
  }
#endif
  if (!ops) {
    ops = make_cpu_ops();
    input = host_input(*loader);
  }
  const MlpShape shape{data.inputs, o.hidden, data.classes};
  Mlp model(*ops, shape, static_cast<int>(o.batch_size), o.seed);
  std::unique_ptr<GradReducer> reducer =
      make_grad_reducer(world, ReduceTarget{ops.get(), device.gpu, gpu.stream});
  ops->set_wait_check([r = reducer.get()] { r->check(); });  // a failed peer ends a wait
  // The token task's inputs are sparse and small: it wants a larger step than pixels.
  Step step{*ops,
            *input,
            model,
            *reducer,
            data,
            data.tokens ? ops->alloc(o.batch_size * data.inputs) : nullptr,
            data.tokens ? ops->alloc_i64(o.batch_size) : nullptr,
            o.lr > 0 ? o.lr : (data.tokens ? 0.5f : 0.05f)};
  const uint64_t global_batch = o.batch_size * world.world_size;
  if (leader) {
    say("data " + data.describe + "; model " + shape.describe() + " (" +
        std::to_string(shape.params()) + " parameters); global batch " +
        std::to_string(global_batch) + " (" + std::to_string(o.batch_size) + " x " +
        std::to_string(world.world_size) + " ranks); " +
        std::to_string(loader->batches_per_epoch()) + " steps per epoch; lr " + number(step.lr) +
        "; gradients: " + reducer->describe());
  }

  Totals totals;
  const auto start = Clock::now();
  try {
    for (int epoch = 0; epoch < o.epochs && (!o.max_steps || totals.steps < o.max_steps); ++epoch) {
      loader->set_epoch(static_cast<uint64_t>(epoch));
      loader->start_epoch();  // collective under MPI: every rank starts the epoch together
      const auto epoch_start = Clock::now();
      const auto [epoch_loss, epoch_steps] = train_epoch(o, step, totals);
      ops->synchronize();
      const double mean = mean_over_ranks(world, epoch_steps ? epoch_loss / epoch_steps : 0.0);
      const double rate = static_cast<double>(epoch_steps * global_batch) /
                          std::max(1e-9, seconds(Clock::now() - epoch_start));
      if (leader) {
        char line[160];
        std::snprintf(line, sizeof line, "epoch %d: %llu steps, mean loss %.4f, %.1f samples/s",
                      epoch, static_cast<unsigned long long>(epoch_steps), mean, rate);
        say(line);
      }
    }
    ops->synchronize();
    report(world, totals, seconds(Clock::now() - start), device.gpu);
  } catch (const std::exception& e) {
    // The locals' destructors wait for the GPU's queued work (the feeder's drain, cudaFree,
    // NCCL's destroy), which may sit behind a collective a dead peer never finishes: the
    // communicator is aborted and the world stopped before them.
    reducer->abort();
    if (world_abortable(world)) fail(world, e);
    throw;
  }
  if (step.feats) ops->free(step.feats);
  if (step.targets) ops->free_i64(step.targets);
}

}  // namespace stoker::train
