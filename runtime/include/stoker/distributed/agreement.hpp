// The parts of the epoch agreement that need no MPI: what each rank believes about the
// epoch it starts (an EpochView), the one check of everyone's views, and how long a rank
// waits for the others, with the lines it prints while it waits; and agree_on_epoch, which
// exchanges the views over MPI. The Python module exchanges them over torch.distributed's
// store and calls the same check, so every message is written once.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/distributed/sampler.hpp"

namespace stoker {

// What one rank believes about the epoch it is starting.
struct EpochView {
  uint64_t comm_rank = 0;             // its rank in the group that exchanged the views
  uint64_t rank = 0, world_size = 1;  // the place its sampler was built for
  uint64_t seed = 0, epoch = 0, size = 0, fingerprint = 0;
  uint64_t shuffle = 0, drop_last = 0, block = 0;
  uint64_t stream = 0;  // 0: by index; else 1 + the shuffle buffer
};
inline constexpr size_t kEpochViewWords = 11;  // the fields above, in that order

EpochView epoch_view(const SamplerOptions& opts, uint64_t epoch, uint64_t comm_rank);
std::array<uint64_t, kEpochViewWords> to_words(const EpochView& v);
// Throws stoker::Error unless `words` holds kEpochViewWords values.
EpochView view_from_words(std::span<const uint64_t> words);

// Under MPI the ranks take rank 0's seed (agree_on_epoch returns it); over
// torch.distributed, as torch's own DistributedSampler requires, the seeds must match.
enum class SeedRule { take_rank0, must_match };

// Checks the views of every rank (views[i].comm_rank == i): each sampler built for its own
// rank and the group's size, then the dataset (size, fingerprint), the seed (must_match
// only), the epoch and the sampler options. Throws stoker::Error ("agree_on_epoch: ranks
// disagree on the seed: rank 0 has seed 1, rank 1 has seed 2 ...") naming the ranks that
// differ and what differs: every rank that checks the same views throws the same text.
void check_epoch_views(const std::vector<EpochView>& views, SeedRule seeds);

// "rank 3", "ranks 0,2-4".
std::string rank_list(const std::vector<uint64_t>& ranks);

// How a rank waits for the others at the agreement, like a collective: it prints a line
// naming the missing ranks every `warn` and gives up after `timeout` (0: never).
struct AgreeWait {
  std::chrono::seconds warn{60};
  std::chrono::seconds timeout{1800};  // NCCL's default; a checkpoint or a validation pass
                                       // on one rank must not kill the job
};
// STOKER_AGREE_WARN (seconds, >= 1) and STOKER_AGREE_TIMEOUT (seconds, 0: wait forever),
// defaults 60 and 1800. Throws stoker::Error naming the variable when one is malformed.
AgreeWait agree_wait_from_environment();

// The line a waiting rank prints every `warn`; `missing` names the ranks it waits for
// ("rank 0", "ranks 2-3"). Rank 0 prints it while any rank is late, and rank 1 while rank
// 0 is: the others stay quiet, so a late rank costs two lines per interval, not a line per rank.
std::string agree_waiting_line(uint64_t rank, uint64_t epoch, const std::string& missing,
                               std::chrono::seconds waited, const AgreeWait& wait);
// What a rank says when the others did not all arrive within wait.timeout (`missing`: ""
// when this rank cannot tell who is missing).
std::string agree_timeout_text(uint64_t epoch, const std::string& missing, const AgreeWait& wait);

// The same for a rank waiting for rank 0's listing of the image folder `root`
// (shared_listing.hpp): rank 1 says it, the others stay quiet.
std::string listing_waiting_line(uint64_t rank, const std::string& root,
                                 std::chrono::seconds waited, const AgreeWait& wait);
std::string listing_timeout_text(const std::string& root, const AgreeWait& wait);

// The ranks of a world of `world_size` > 1 that cannot be checked (no MPI world, no
// torch.distributed): prints one line on stderr the first time in this process; returns
// the text stats() reports.
std::string note_unchecked_ranks(uint64_t rank, uint64_t world_size);

// What checks the epochs of a loader or sampler of `rank` in a world of `world_size`, for
// stats(): "off" (agree false), "single rank" (world_size 1), "MPI", or
// note_unchecked_ranks()'s text (its line printed once). Calls detect_world() when
// world_size > 1 and agree (collective under an MPI launcher, like the loader's start).
std::string agreement_mode(uint64_t rank, uint64_t world_size, bool agree);

// Makes every rank agree on the seed (rank 0's is broadcast and returned), the epoch,
// the dataset size and fingerprint, the sampler options (shuffle, drop_last, block) and
// each rank's place (opts.rank/world_size must be its MPI rank and size). A mismatch
// throws stoker::Error on every rank, naming the ranks that differ and what differs
// (check_epoch_views above). Collective under MPI, and it waits like one: a late
// rank is waited for, rank 0 (and rank 1, when rank 0 is the late one) printing a line
// naming it every STOKER_AGREE_WARN seconds (default 60); only when a rank has not
// arrived after STOKER_AGREE_TIMEOUT seconds (default 1800; 0: never) do the waiting
// ranks print why and call MPI_Abort.
// opts.world_size 1 (a loader one rank uses alone): no collective, returns opts.seed.
// Without MPI it returns opts.seed and says once on stderr that the ranks are not checked
// (note_unchecked_ranks).
uint64_t agree_on_epoch(const SamplerOptions& opts, uint64_t epoch);

}  // namespace stoker
