// One rank of the MPI sampler checks: agrees on the epoch with the other ranks, reads its
// shard (optionally resuming from a state file) and writes it to OUT/rank-R.txt:
//   start=S length=L world=W taken=T
//   <T indices, one per line>
// and its resume state to OUT/state-R.txt. An error goes to OUT/error-R.txt and stderr,
// and the rank exits 1. With --absent-rank R, rank R never joins: the others must abort. Each rank
// is given seed 1000 + rank, so the shards only agree if agree_on_epoch really hands out rank 0's
// seed.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/sampler.hpp"
#include "stoker/distributed/world.hpp"

namespace {
struct Args {
  std::string out, state_in;
  uint64_t size = 1000, epoch = 0, block = 0, consume = UINT64_MAX;
  int64_t bad_rank = -1, absent_rank = -1;
  bool drop_last = false, stream = false;
};

// --stream: shards of uneven sizes (37, 1, 90, 12, 55, ... cut to the dataset size), read
// as streams through a shuffle buffer of 16.
std::shared_ptr<const std::vector<uint64_t>> stream_shards(uint64_t size) {
  auto shards = std::make_shared<std::vector<uint64_t>>();
  const uint64_t pattern[] = {37, 1, 90, 12, 55};
  for (uint64_t left = size, k = 0; left > 0; ++k) {
    shards->push_back(std::min(left, pattern[k % 5]));
    left -= shards->back();
  }
  return shards;
}

// The shard straight from permute_index and the shard rule, without the sampler class:
// under MPI the sampler must yield exactly the order the pure function defines.
void check_against_pure_function(const stoker::DistributedSampler& s) {
  const auto& o = s.options();
  const uint64_t remaining = o.size - s.start();
  for (uint64_t i = 0; i < s.length(); ++i) {
    const uint64_t pos = s.start() + (i * o.world_size + o.rank) % remaining;
    if (s.at(i) != stoker::permute_index(pos, o.size, o.seed, s.epoch())) {
      throw stoker::Error("mpi_sampler_ranks",
                          "index " + std::to_string(i) + " differs from permute_index");
    }
  }
}

int run(const Args& a, uint64_t& rank) {
  const stoker::World world = stoker::detect_world(/*mpi_program=*/true);
  rank = world.rank;
  if (!world.mpi) throw stoker::Error("mpi_sampler_ranks", "not launched under MPI");
  stoker::SamplerOptions o;
  o.size = static_cast<int64_t>(world.rank) == a.bad_rank ? a.size - 1 : a.size;
  o.fingerprint = 0x5eed0000 + o.size;
  o.seed = 1000 + world.rank;
  o.world_size = world.world_size;
  o.rank = world.rank;
  o.drop_last = a.drop_last;
  o.block = a.block;
  if (a.stream) {
    o.shards = stream_shards(o.size);
    o.shuffle_buffer = 16;
  }
  if (static_cast<int64_t>(world.rank) == a.absent_rank) {
    std::this_thread::sleep_for(std::chrono::seconds(90));  // never joins the agreement
    return 1;
  }
  o.seed = stoker::agree_on_epoch(o, a.epoch);
  stoker::DistributedSampler s(o);
  s.set_epoch(a.epoch);
  if (!a.state_in.empty()) {
    std::ifstream in(a.state_in);
    std::stringstream text;
    text << in.rdbuf();
    s.restore(stoker::SamplerState::parse(text.str()));
  }
  if (o.block == 0 && !a.stream) check_against_pure_function(s);
  const uint64_t taken = std::min(a.consume, s.length());
  const std::string me = std::to_string(world.rank);
  std::ofstream out(a.out + "/rank-" + me + ".txt");
  out << "start=" << s.start() << " length=" << s.length() << " world=" << world.world_size
      << " taken=" << taken << "\n";
  for (uint64_t i = 0; i < taken; ++i) out << s.at(i) << "\n";
  std::ofstream(a.out + "/state-" + me + ".txt") << s.state(taken).to_string() << "\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"one rank of the MPI sampler check"};
  Args a;
  app.add_option("--out", a.out, "output folder")->required();
  app.add_option("--size", a.size);
  app.add_option("--epoch", a.epoch);
  app.add_option("--block", a.block);
  app.add_option("--consume", a.consume, "indices to take (default: all)");
  app.add_option("--state-in", a.state_in, "resume from this state file");
  app.add_option("--bad-rank", a.bad_rank, "this rank sees a dataset one sample short");
  app.add_option("--absent-rank", a.absent_rank, "this rank never joins the agreement");
  app.add_flag("--drop-last", a.drop_last);
  app.add_flag("--stream", a.stream, "stream uneven shards (the sampler's streaming mode)");
  CLI11_PARSE(app, argc, argv);
  uint64_t rank = 0;
  try {
    return run(a, rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %llu: stoker: error: %s\n", static_cast<unsigned long long>(rank),
                 e.what());
    std::ofstream(a.out + "/error-" + std::to_string(rank) + ".txt") << e.what() << "\n";
    return 1;
  }
}
