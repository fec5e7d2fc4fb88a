// The epoch views and their check: the same comparison on every rank, so every rank that
// sees the same views reaches the same verdict and throws the same message, whichever
// transport (MPI, torch.distributed's store) brought the views.
#include <functional>
#include <string>
#include <vector>

#include "sampler_text.hpp"
#include "stoker/common/cpuset.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"

namespace stoker {

namespace {
static_assert(sizeof(EpochView) == kEpochViewWords * sizeof(uint64_t));

std::string str(uint64_t v) {
  return std::to_string(v);
}
using distributed::hex64;

// "ranks 0-2 have X, rank 3 has Y": ranks grouped by what `describe` says of their view,
// or "" when every rank says the same.
std::string disagreement(const std::vector<EpochView>& views,
                         const std::function<std::string(const EpochView&)>& describe) {
  std::vector<std::string> kinds;
  std::vector<std::vector<uint64_t>> members;
  for (const auto& v : views) {
    const std::string d = describe(v);
    size_t k = 0;
    while (k < kinds.size() && kinds[k] != d) ++k;
    if (k == kinds.size()) {
      kinds.push_back(d);
      members.emplace_back();
    }
    members[k].push_back(v.comm_rank);
  }
  if (kinds.size() < 2) return "";
  std::string out;
  for (size_t k = 0; k < kinds.size(); ++k) {
    out += (k ? ", " : "") + rank_list(members[k]) + (members[k].size() > 1 ? " have " : " has ") +
           kinds[k];
  }
  return out;
}

void check_places(const std::vector<EpochView>& views) {
  std::string misplaced;
  for (const auto& v : views) {
    if (v.rank != v.comm_rank || v.world_size != views.size()) {
      misplaced += (misplaced.empty() ? "" : "; ") + std::string("rank ") + str(v.comm_rank) +
                   " of " + str(views.size()) + " built its sampler as rank " + str(v.rank) +
                   " of world size " + str(v.world_size);
    }
  }
  if (!misplaced.empty()) {
    throw Error("agree_on_epoch", misplaced,
                "build the sampler from the detected rank and world size (or leave them unset)");
  }
}

// Throws when the views differ in what `describe` says.
void check_same(const std::vector<EpochView>& views, const std::string& what,
                const std::function<std::string(const EpochView&)>& describe,
                const std::string& todo) {
  const std::string d = disagreement(views, describe);
  if (!d.empty()) throw Error("agree_on_epoch", "ranks disagree on " + what + ": " + d, todo);
}
}  // namespace

EpochView epoch_view(const SamplerOptions& opts, uint64_t epoch, uint64_t comm_rank) {
  return {comm_rank,
          opts.rank,
          opts.world_size,
          opts.seed,
          epoch,
          opts.size,
          opts.fingerprint,
          opts.shuffle,
          opts.drop_last,
          opts.block,
          opts.shards ? 1 + opts.shuffle_buffer : 0,
          opts.ra_reps};
}

std::array<uint64_t, kEpochViewWords> to_words(const EpochView& v) {
  return {v.comm_rank,   v.rank,    v.world_size, v.seed,  v.epoch,  v.size,
          v.fingerprint, v.shuffle, v.drop_last,  v.block, v.stream, v.ra_reps};
}

EpochView view_from_words(std::span<const uint64_t> w) {
  if (w.size() != kEpochViewWords) {
    throw Error("epoch view", "has " + str(w.size()) + " values, not " + str(kEpochViewWords),
                "exchange the views that to_words() makes");
  }
  return {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11]};
}

void check_epoch_views(const std::vector<EpochView>& views, SeedRule seeds) {
  check_places(views);
  check_same(
      views, "the dataset",
      [](const EpochView& v) {
        // 0: no fingerprint could be made (a Python dataset of plain objects)
        return "dataset size " + str(v.size) +
               (v.fingerprint ? " (fingerprint " + hex64(v.fingerprint) + ")"
                              : " (contents not checked)");
      },
      "give every rank the same dataset (same files, same sizes)");
  if (seeds == SeedRule::must_match) {
    check_same(
        views, "the seed", [](const EpochView& v) { return "seed " + str(v.seed); },
        "give every rank the same seed: with a rank-dependent one the shards overlap");
  }
  check_same(
      views, "the epoch", [](const EpochView& v) { return "epoch " + str(v.epoch); },
      "call set_epoch with the same epoch on every rank");
  check_same(
      views, "the sampler options",
      [](const EpochView& v) {
        return std::string("shuffle ") + (v.shuffle ? "on" : "off") + ", drop_last " +
               (v.drop_last ? "on" : "off") + ", block " + str(v.block) +
               (v.stream ? ", streaming with a shuffle buffer of " + str(v.stream - 1) : "") +
               (v.ra_reps != 1 ? ", ra_reps " + str(v.ra_reps) : "");
      },
      "give every rank the same sampler options");
}

std::string rank_list(const std::vector<uint64_t>& ranks) {
  std::vector<int> as_ints(ranks.begin(), ranks.end());
  return (ranks.size() > 1 ? "ranks " : "rank ") + CpuSet::from_list(as_ints).to_string();
}

}  // namespace stoker
