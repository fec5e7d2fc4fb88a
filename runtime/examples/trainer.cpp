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
#include "stoker/cuda/cuda_device.hpp"
#include "stoker/cuda/cuda_pinner.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/launch_env.hpp"
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

std::string rank_of(const WorldInfo& w) {
  return "rank " + std::to_string(w.rank) + "/" + std::to_string(w.world_size);
}

// The rank before the world is known (an MPI initialisation failure), from the launcher.
std::string launcher_rank() {
  try {
    const LaunchRanks r = launch_ranks(process_env());
    return "rank " + std::to_string(r.rank) + " (" + r.source + ")";
  } catch (const Error&) {
    return "rank ?";
  }
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  // Slurm's emulated nodes share a host name; its node name tells them apart.
  if (const char* n = std::getenv("SLURMD_NODENAME")) return n;
  return h;
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
         p.worker_cpus.to_string() + ") prefetch " + std::to_string(p.prefetch) + " budget " +
         budget + " gpu " + (p.gpu.empty() ? "none" : p.gpu) + " pin " +
         (p.pin_memory ? "yes" : "no");
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
  void synchronize() const {
    if (stream)
      check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  }
  static void check(cudaError_t e, const char* call) {
    if (e != cudaSuccess) throw Error("GPU", std::string(call) + ": " + cudaGetErrorString(e));
  }
#else
  explicit GpuContext(const DeviceChoice&) {}
  void synchronize() const {}
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

WorldInfo detect_world_or_say_rank() {
  try {
    return detect_world();
  } catch (const Error& e) {
    throw Error(launcher_rank(), std::string("MPI initialisation failed: ") + e.what());
  }
}

void check_data(const TrainOptions& o, const Dataset& data, const WorldInfo& world) {
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
}

// The plugin's plan when it tuned this task; else one computed here, for this rank's place
// among the ranks on its node as the launcher says (launch_ranks: the same ranks MPI has).
Plan plan_for(const TrainOptions& o, const Dataset& data, std::string& source) {
  if (std::optional<Plan> env = plan_from_process_env()) {
    source = "the STOKER_* environment (the Slurm plugin)";
    return *env;
  }
  PlanRequest request;
  request.batch_bytes = o.batch_size * data.transform->output_spec().bytes();
  LocalPlan local = plan_this_process(request);
  source = local.source + " (no plugin plan)";
  return local.plan;
}

std::unique_ptr<Loader> make_loader(const TrainOptions& o, const WorldInfo& world, const Plan& plan,
                                    const DeviceChoice& device, const Dataset& data) {
  LoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.drop_last = true;  // every rank takes the same number of full steps
  lo.seed = o.seed;
  lo.world_size = world.world_size;
  lo.rank = world.rank;
  lo.workers = o.workers;
  lo.prefetch = o.prefetch;
  lo.plan = plan;
  if (device.gpu) {
    lo.pinner = make_host_pinner(plan);
#if STOKER_HAVE_CUDA
    lo.held_batches = DeviceFeeder::depth_for(plan) + 1;
#endif
  }
  return std::make_unique<Loader>(data.source, data.transform, lo);
}

// The data-parallel loop over the loader's batches, and what it measured.
struct Training {
  Training(const TrainOptions& o, const WorldInfo& world, const Dataset& data, StepInput& input,
           MathOps& ops, Mlp& model, GradReducer& reducer, const GpuContext& gpu, float lr)
      : o(o), world(world), data(data), input(input), ops(ops), model(model), reducer(reducer),
        gpu(gpu), lr(lr) {}

  const TrainOptions& o;
  const WorldInfo& world;
  const Dataset& data;
  StepInput& input;
  MathOps& ops;
  Mlp& model;
  GradReducer& reducer;
  const GpuContext& gpu;
  float lr;
  float* feats = nullptr;      // the token task's per-step features
  int64_t* targets = nullptr;  // and targets (the image task uses the batch as is)
  uint64_t steps = 0, samples = 0;
  double first_loss = 0, wait_s = 0;
  std::deque<double> recent;  // the last losses, for a less noisy "last"

  bool more() const { return !o.max_steps || steps < o.max_steps; }

  // One step; false at the end of the epoch.
  bool step(double& epoch_loss) {
    const auto t0 = Clock::now();
    std::optional<StepBatch> b = input.next();
    wait_s += seconds(Clock::now() - t0);
    if (!b) return false;
    const float* x = static_cast<const float*>(b->data);
    const int64_t* t = b->labels;
    if (data.tokens) {
      ops.bag_of_tokens(b->data, data.u32, b->size, data.seq_len, data.inputs, feats, targets);
      x = feats;
      t = targets;
    }
    const float loss = model.forward_backward(x, t, b->size);
    reducer.mean(model.grads(), model.size());
    model.step(lr);
    input.done();
    if (steps == 0) first_loss = loss;
    recent.push_back(loss);
    if (recent.size() > 10) recent.pop_front();
    epoch_loss += loss;
    ++steps;
    samples += static_cast<uint64_t>(b->size);
    return true;
  }

  void epoch(Loader& loader, int e) {
    loader.set_epoch(static_cast<uint64_t>(e));
    loader.start_epoch();  // collective under MPI: every rank starts the epoch together
    double epoch_loss = 0;
    uint64_t epoch_steps = 0;
    const auto epoch_start = Clock::now();
    while (more() && step(epoch_loss)) ++epoch_steps;
    gpu.synchronize();
    const double mean = mean_over_ranks(world, epoch_steps ? epoch_loss / epoch_steps : 0.0);
    const double rate = static_cast<double>(epoch_steps * o.batch_size * world.world_size) /
                        std::max(1e-9, seconds(Clock::now() - epoch_start));
    if (world.rank != 0) return;
    char line[160];
    std::snprintf(line, sizeof line, "epoch %d: %llu steps, mean loss %.4f, %.1f samples/s", e,
                  static_cast<unsigned long long>(epoch_steps), mean, rate);
    say(line);
  }

  // Collective: every rank contributes; rank 0 prints.
  void report(Clock::time_point start, bool on_gpu) {
    gpu.synchronize();
    const double elapsed = seconds(Clock::now() - start);
    const double wall = max_over_ranks(world, elapsed);
    const double share_mine = wait_s / std::max(1e-9, elapsed);
    const double share_mean = mean_over_ranks(world, share_mine);
    const double share_max = max_over_ranks(world, share_mine);
    const double first = mean_over_ranks(world, first_loss);
    const double last = mean_over_ranks(
        world,
        recent.empty() ? 0.0 : std::accumulate(recent.begin(), recent.end(), 0.0) / recent.size());
    const double global_samples = static_cast<double>(samples) * world.world_size;
    if (world.rank != 0) return;
    char line[400];
    std::snprintf(line, sizeof line,
                  "done: %llu steps, %.0f samples in %.2f s = %.1f samples/s; loss first %.4f "
                  "last %.4f; input wait %.1f%% of step time (mean over ranks; max %.1f%%); "
                  "device %s",
                  static_cast<unsigned long long>(steps), global_samples, wall,
                  global_samples / std::max(1e-9, wall), first, last, 100 * share_mean,
                  100 * share_max, on_gpu ? "gpu" : "cpu");
    say(line);
  }
};

// The model's maths and the step's input, on the GPU when the device is one.
void make_ops(const DeviceChoice& device, const Plan& plan, const GpuContext& gpu, Loader& loader,
              std::unique_ptr<MathOps>& ops, std::unique_ptr<StepInput>& input) {
#if STOKER_HAVE_CUDA
  if (device.gpu) {
    ops = make_cuda_ops(device.device, plan.gpu, gpu.stream);
    input = device_input(loader, gpu.stream);
  }
#else
  (void)device;
  (void)plan;
  (void)gpu;
#endif
  if (!ops) {
    ops = make_cpu_ops();
    input = host_input(loader);
  }
}

}  // namespace

void run(const TrainOptions& o, WorldInfo& world) {
  world = detect_world_or_say_rank();
  const std::string me = rank_of(world);
  Dataset data = open_dataset(o);
  check_data(o, data, world);

  std::string plan_source;
  Plan plan = plan_for(o, data, plan_source);
  say(me + " (local " + std::to_string(world.local_rank) + "/" + std::to_string(world.local_size) +
      ", host " + host_name() + ", world from " + world.source + "): plan from " + plan_source +
      ": " + plan_line(plan));
  const DeviceChoice device = choose_device(plan, o.device, static_cast<int>(world.local_rank));
  say(me + ": device " + device.note);
  GpuContext gpu(device);
  std::unique_ptr<Loader> loader = make_loader(o, world, plan, device, data);
  std::unique_ptr<MathOps> ops;
  std::unique_ptr<StepInput> input;
  make_ops(device, plan, gpu, *loader, ops, input);

  const MlpShape shape{data.inputs, o.hidden, data.classes};
  Mlp model(*ops, shape, static_cast<int>(o.batch_size), o.seed);
  std::unique_ptr<GradReducer> reducer =
      make_grad_reducer(world, ReduceTarget{ops.get(), device.gpu, gpu.stream});
  // The token task's inputs are sparse and small: it wants a larger step than pixels.
  const float lr = o.lr > 0 ? o.lr : (data.tokens ? 0.5f : 0.05f);
  Training t(o, world, data, *input, *ops, model, *reducer, gpu, lr);
  if (data.tokens) {
    t.feats = ops->alloc(o.batch_size * data.inputs);
    t.targets = ops->alloc_i64(o.batch_size);
  }
  if (world.rank == 0) {
    say("data " + data.describe + "; model " + shape.describe() + " (" +
        std::to_string(shape.params()) + " parameters); global batch " +
        std::to_string(o.batch_size * world.world_size) + " (" + std::to_string(o.batch_size) +
        " x " + std::to_string(world.world_size) + " ranks); " +
        std::to_string(loader->batches_per_epoch()) + " steps per epoch; lr " + number(lr) +
        "; gradients: " + reducer->describe());
  }
  const auto start = Clock::now();
  for (int epoch = 0; epoch < o.epochs && t.more(); ++epoch) t.epoch(*loader, epoch);
  t.report(start, device.gpu);
  if (t.feats) ops->free(t.feats);
  if (t.targets) ops->free_i64(t.targets);
}

}  // namespace stoker::train
