// agree_on_epoch(): one all-gather of every rank's view of the epoch, then the same
// comparison on every rank, so every rank reaches the same verdict and the same message.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "mpi_comm.hpp"
#include "sampler_text.hpp"
#include "stoker/distributed/coordination.hpp"
#include "stoker/error.hpp"
#include "stoker/plan/cpuset.hpp"
#include "stoker/plan/launch_env.hpp"

namespace stoker {

#ifdef STOKER_HAVE_MPI
namespace {
// What one rank believes; exchanged as kFields uint64 values.
struct View {
  uint64_t mpi_rank, rank, world_size, seed, epoch, size, fingerprint, shuffle, drop_last, block;
  uint64_t stream;  // 0: by index; else 1 + the shuffle buffer
};
constexpr int kFields = sizeof(View) / sizeof(uint64_t);
constexpr uint64_t kMaxAgreeSeconds = 7 * 24 * 3600;  // STOKER_AGREE_TIMEOUT's bound

std::string str(uint64_t v) {
  return std::to_string(v);
}
using distributed::hex64;

// "ranks 0-2 have X, rank 3 has Y": ranks grouped by what `describe` says of their view,
// or "" when every rank says the same.
std::string disagreement(const std::vector<View>& views,
                         const std::function<std::string(const View&)>& describe) {
  std::vector<std::string> kinds;
  std::vector<std::vector<int>> members;
  for (const auto& v : views) {
    const std::string d = describe(v);
    size_t k = 0;
    while (k < kinds.size() && kinds[k] != d) ++k;
    if (k == kinds.size()) {
      kinds.push_back(d);
      members.emplace_back();
    }
    members[k].push_back(static_cast<int>(v.mpi_rank));
  }
  if (kinds.size() < 2) return "";
  std::string out;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const bool many = members[k].size() > 1;
    out += (k ? ", " : "") + std::string(many ? "ranks " : "rank ") +
           CpuSet::from_list(members[k]).to_string() + (many ? " have " : " has ") + kinds[k];
  }
  return out;
}

// All-gathers the views, polling so that a rank that never arrives cannot hang the rest.
std::vector<View> gather(MPI_Comm comm, const View& mine, int size) {
  std::vector<View> all(static_cast<size_t>(size));
  MPI_Request request;
  MPI_Iallgather(&mine, kFields, MPI_UINT64_T, all.data(), kFields, MPI_UINT64_T, comm, &request);
  const auto limit = std::chrono::seconds(
      env_whole(process_env(), "STOKER_AGREE_TIMEOUT", 1, kMaxAgreeSeconds).value_or(60));
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto pause = std::chrono::microseconds(50);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return all;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr,
                   "stoker: rank %llu: agree_on_epoch: not every rank arrived within %lld s (a "
                   "rank hung, crashed or skipped set_epoch); aborting the job "
                   "(STOKER_AGREE_TIMEOUT sets the limit)\n",
                   static_cast<unsigned long long>(mine.mpi_rank),
                   static_cast<long long>(limit.count()));
      MPI_Abort(comm, 3);
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
}

void check(const std::vector<View>& views) {
  std::string misplaced;
  for (const auto& v : views) {
    if (v.rank != v.mpi_rank || v.world_size != views.size()) {
      misplaced += (misplaced.empty() ? "" : "; ") + std::string("MPI rank ") + str(v.mpi_rank) +
                   " of " + str(views.size()) + " built its sampler as rank " + str(v.rank) +
                   " of world size " + str(v.world_size);
    }
  }
  if (!misplaced.empty()) {
    throw Error("agree_on_epoch", misplaced,
                "build the sampler from detect_world()'s rank and world size");
  }
  std::string d = disagreement(views, [](const View& v) {
    return "dataset size " + str(v.size) + " (fingerprint " + hex64(v.fingerprint) + ")";
  });
  if (!d.empty()) {
    throw Error("agree_on_epoch", "ranks disagree on the dataset: " + d,
                "give every rank the same dataset (same files, same sizes)");
  }
  d = disagreement(views, [](const View& v) { return "epoch " + str(v.epoch); });
  if (!d.empty()) {
    throw Error("agree_on_epoch", "ranks disagree on the epoch: " + d,
                "call set_epoch with the same epoch on every rank");
  }
  d = disagreement(views, [](const View& v) {
    return std::string("shuffle ") + (v.shuffle ? "on" : "off") + ", drop_last " +
           (v.drop_last ? "on" : "off") + ", block " + str(v.block) +
           (v.stream ? ", streaming with a shuffle buffer of " + str(v.stream - 1) : "");
  });
  if (!d.empty()) {
    throw Error("agree_on_epoch", "ranks disagree on the sampler options: " + d,
                "give every rank the same sampler options");
  }
}
}  // namespace
#endif

uint64_t agree_on_epoch(const SamplerOptions& opts, uint64_t epoch) {
#ifdef STOKER_HAVE_MPI
  const WorldInfo world = detect_world();
  MPI_Comm comm = distributed::coordination_comm();
  if (world.mpi && comm != MPI_COMM_NULL) {
    const View mine{world.rank,
                    opts.rank,
                    opts.world_size,
                    opts.seed,
                    epoch,
                    opts.size,
                    opts.fingerprint,
                    opts.shuffle,
                    opts.drop_last,
                    opts.block,
                    opts.shards ? 1 + opts.shuffle_buffer : 0};
    const auto views = gather(comm, mine, static_cast<int>(world.world_size));
    check(views);
    return views[0].seed;
  }
#endif
  (void)epoch;
  return opts.seed;
}

}  // namespace stoker
