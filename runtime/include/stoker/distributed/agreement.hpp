// The parts of the epoch agreement that need no MPI: what each rank believes about the
// epoch it starts (an EpochView) and the one check of everyone's views; and agree_on_epoch,
// which exchanges the views over MPI. How long a rank waits for the others, and the lines it
// prints meanwhile, are agree_wait.hpp's. The Python module exchanges them over torch.distributed's
// store and calls the same check, so every message is written once.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/distributed/agree_wait.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker {

// What one rank believes about the epoch it is starting.
struct EpochView {
  uint64_t comm_rank = 0;             // its rank in the group that exchanged the views
  uint64_t rank = 0, world_size = 1;  // the place its sampler was built for
  uint64_t seed = 0, epoch = 0, size = 0, fingerprint = 0;
  uint64_t shuffle = 0, drop_last = 0, block = 0;
  uint64_t stream = 0;  // 0: by index; else 1 + the shuffle buffer
  uint64_t ra_reps = 1;
};
inline constexpr size_t kEpochViewWords = 12;  // the fields above, in that order

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

// What checks the epochs of a loader or sampler of `rank` in a world of `world_size`, for
// stats(): "off" (agree false), "single rank" (world_size 1), "MPI", or
// note_unchecked_ranks()'s text (its line printed once). Calls detect_world() when
// world_size > 1 and agree (collective under an MPI launcher, like the loader's start).
std::string agreement_mode(uint64_t rank, uint64_t world_size, bool agree);

// Makes every rank agree on the seed (rank 0's is broadcast and returned), the epoch,
// the dataset size and fingerprint, the sampler options (shuffle, drop_last, block, ra_reps) and
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
