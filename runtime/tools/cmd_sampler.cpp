// `stoker sampler`: which samples a rank reads in an epoch, from a resume point on.
// Answers "which samples does rank 3 see in epoch 2 after resuming?" without code.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker::cli {

namespace {

struct Args {
  SamplerOptions opts;
  uint64_t epoch = 0, resume_at = 0, limit = UINT64_MAX;
  bool no_shuffle = false, json = false;
  std::string state;
  CLI::Option* state_opt = nullptr;
};

void run(Args a) {
  a.opts.shuffle = !a.no_shuffle;
  SamplerState st;
  if (a.state_opt->count()) {
    // The state carries the order's identity; the world is the one given here.
    st = SamplerState::parse(a.state);
    a.opts.size = st.size;
    a.opts.seed = st.seed;
    a.opts.fingerprint = st.fingerprint;
    a.opts.shuffle = st.shuffle;
    a.opts.block = st.block;
    a.opts.ra_reps = st.ra_reps;
  } else if (a.opts.size == 0) {
    throw Error("--size", "is required (the number of samples in the dataset) and must be > 0");
  }
  DistributedSampler s(a.opts);
  s.set_epoch(a.epoch);
  if (!a.state_opt->count() && a.resume_at > 0) {
    const uint64_t positions = a.opts.size * a.opts.ra_reps;  // the sampler checked overflow
    if (a.resume_at > positions) {
      throw Error("--resume-at",
                  "resume position " + std::to_string(a.resume_at) + " is beyond the epoch of " +
                      std::to_string(positions) +
                      (a.opts.ra_reps > 1 ? " positions (--size x --ra-reps)" : " samples"),
                  "give a global position from 0 to --size");
    }
    st = s.state(0);
    st.consumed = a.resume_at;
  }
  if (a.state_opt->count() || a.resume_at > 0) s.restore(st);

  const uint64_t count = s.length() < a.limit ? s.length() : a.limit;
  const auto& o = s.options();
  if (a.json) {
    std::printf(
        "{\"rank\": %llu, \"world_size\": %llu, \"epoch\": %llu, \"seed\": %llu, "
        "\"size\": %llu, \"start\": %llu, \"length\": %llu, \"indices\": [",
        static_cast<unsigned long long>(o.rank), static_cast<unsigned long long>(o.world_size),
        static_cast<unsigned long long>(s.epoch()), static_cast<unsigned long long>(o.seed),
        static_cast<unsigned long long>(o.size), static_cast<unsigned long long>(s.start()),
        static_cast<unsigned long long>(s.length()));
    for (uint64_t i = 0; i < count; ++i) {
      std::printf(i ? ", %llu" : "%llu", static_cast<unsigned long long>(s.at(i)));
    }
    std::printf("]}\n");
    return;
  }
  std::printf(
      "# rank %llu of %llu, epoch %llu, seed %llu, %llu samples, shuffle %s, drop_last "
      "%s%s: %llu indices from global position %llu%s\n",
      static_cast<unsigned long long>(o.rank), static_cast<unsigned long long>(o.world_size),
      static_cast<unsigned long long>(s.epoch()), static_cast<unsigned long long>(o.seed),
      static_cast<unsigned long long>(o.size), o.shuffle ? "on" : "off", o.drop_last ? "on" : "off",
      o.block ? (", block " + std::to_string(o.block)).c_str() : "",
      static_cast<unsigned long long>(s.length()), static_cast<unsigned long long>(s.start()),
      count < s.length() ? (", first " + std::to_string(count) + " shown").c_str() : "");
  for (uint64_t i = 0; i < count; ++i) {
    std::printf("%llu\n", static_cast<unsigned long long>(s.at(i)));
  }
}

}  // namespace

const Command sampler_command(50, [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "sampler", "Print the dataset indices a rank reads in an epoch (from a resume point on)");
  auto* size = cmd->add_option("--size", args->opts.size, "Samples in the dataset");
  auto* seed = cmd->add_option("--seed", args->opts.seed, "Shuffle seed (default 0)");
  auto* epoch = cmd->add_option("--epoch", args->epoch, "Epoch (default 0)");
  cmd->add_option("--world-size", args->opts.world_size, "Number of ranks (default 1)");
  cmd->add_option("--rank", args->opts.rank, "This rank, 0 to world size - 1 (default 0)");
  cmd->add_flag("--drop-last", args->opts.drop_last,
                "Drop the tail instead of padding it by wrapping around");
  auto* noshuf = cmd->add_flag("--no-shuffle", args->no_shuffle, "Keep the dataset order");
  auto* block =
      cmd->add_option("--block", args->opts.block,
                      "Node-aware mode: runs of this many samples are read whole by one rank");
  auto* fp =
      cmd->add_option("--fingerprint", args->opts.fingerprint, "Dataset fingerprint (default 0)");
  auto* reps = cmd->add_option("--ra-reps", args->opts.ra_reps,
                               "Repeated augmentation: each sample this many times in a row, "
                               "the epoch cut as torchvision's RASampler (default 1: off)");
  auto* resume = cmd->add_option("--resume-at", args->resume_at,
                                 "Global position of the epoch to resume from (samples consumed "
                                 "by all ranks together)");
  args->state_opt = cmd->add_option("--state", args->state,
                                    "Resume from a saved state line (stoker-sampler v2 ...); it "
                                    "sets seed, epoch, size, shuffle, block and ra_reps");
  for (auto* o : {resume, size, seed, epoch, noshuf, block, fp, reps}) {
    args->state_opt->excludes(o);
  }
  cmd->add_option("--limit", args->limit, "Print at most this many indices");
  cmd->add_flag("--json", args->json, "Print {\"indices\": [...], ...}");
  cmd->callback([args] {
    Args a = *args;
    if (a.state_opt->count()) a.epoch = SamplerState::parse(a.state).epoch;
    run(a);
  });
});

}  // namespace stoker::cli
