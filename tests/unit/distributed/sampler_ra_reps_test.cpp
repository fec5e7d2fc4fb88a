// Repeated augmentation (SamplerOptions::ra_reps): torchvision's RASampler, restated here
// from references/classification/sampler.py (0.14) for the unshuffled order (the Python
// test compares with the class itself): each index `repetitions` times in a row, padded to
// a multiple of the world size, rank r taking every W-th from r, and only the first
// floor(len // 256 * 256 / W) yielded.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "stoker/distributed/sampler.hpp"

using stoker::DistributedSampler;
using stoker::SamplerOptions;
using stoker::SamplerState;
using stoker::test::error_text;

namespace {
SamplerOptions options(uint64_t size, uint64_t world, uint64_t rank, uint64_t reps,
                       bool shuffle = true) {
  return {.size = size,
          .seed = 77,
          .world_size = world,
          .rank = rank,
          .shuffle = shuffle,
          .fingerprint = 0xabc,
          .shards = nullptr,
          .shuffle_buffer = 0,
          .ra_reps = reps};
}

std::vector<uint64_t> ra_sampler(uint64_t size, uint64_t world, uint64_t rank, uint64_t reps) {
  std::vector<uint64_t> indices;
  for (uint64_t i = 0; i < size; ++i) indices.insert(indices.end(), reps, i);
  const uint64_t num_samples = (size * reps + world - 1) / world;
  const uint64_t total = num_samples * world;
  for (uint64_t k = 0; indices.size() < total; ++k) indices.push_back(indices[k]);
  std::vector<uint64_t> mine;
  for (uint64_t k = rank; k < total; k += world) mine.push_back(indices[k]);
  mine.resize(size / 256 * 256 / world);  // num_selected_samples
  return mine;
}

std::vector<uint64_t> shard(const DistributedSampler& s, uint64_t from = 0) {
  std::vector<uint64_t> v;
  for (uint64_t i = from; i < s.length(); ++i) v.push_back(s.at(i));
  return v;
}

// Every rank of a world, restored from `state` when given, in epoch 5.
std::vector<DistributedSampler> world(uint64_t size, uint64_t w, uint64_t reps,
                                      const SamplerState* state = nullptr) {
  std::vector<DistributedSampler> all;
  for (uint64_t r = 0; r < w; ++r) {
    all.emplace_back(options(size, w, r, reps));
    all.back().set_epoch(5);
    if (state) all.back().restore(*state);
  }
  return all;
}
}  // namespace

TEST(SamplerRaReps, UnshuffledEqualsRaSampler) {
  for (uint64_t n : {256, 300, 511, 512, 1000, 1031}) {
    for (uint64_t w : {1, 2, 3, 4, 8}) {
      for (uint64_t reps : {2, 3, 4}) {
        for (uint64_t r = 0; r < w; ++r) {
          SCOPED_TRACE(testing::Message()
                       << "n=" << n << " w=" << w << " reps=" << reps << " rank=" << r);
          DistributedSampler s(options(n, w, r, reps, false));
          EXPECT_EQ(shard(s), ra_sampler(n, w, r, reps));
          for (uint64_t i = 0; i < s.length(); ++i) {
            EXPECT_EQ(s.repetition(i), s.position(i) % reps);
          }
        }
      }
    }
  }
}

TEST(SamplerRaReps, TheShuffledOrderRepeatsEachIndexInARowAndRanksShareTheEpoch) {
  const uint64_t n = 1000, w = 4, reps = 4, end = n / 256 * 256;
  auto all = world(n, w, reps);
  std::vector<uint64_t> read(end, ~uint64_t{0});  // position -> index
  for (auto& s : all) {
    ASSERT_EQ(s.length(), end / w);
    for (uint64_t i = 0; i < s.length(); ++i) read[s.position(i)] = s.at(i);
  }
  for (uint64_t p = 0; p < end; ++p) {
    EXPECT_EQ(read[p], all[0].order(p / reps * reps)) << p;  // the copies of one index
    if (p % reps == 0 && p > 0) {
      EXPECT_NE(read[p], read[p - 1]) << p;
    }
  }
  // Each of the end / reps indices read comes reps times, one copy on each rank.
  for (uint64_t p = 0; p < end; p += reps) {
    std::vector<uint64_t> copies;
    for (auto& s : all) {
      for (uint64_t i = 0; i < s.length(); ++i) {
        if (s.position(i) / reps == p / reps) copies.push_back(s.repetition(i));
      }
    }
    std::sort(copies.begin(), copies.end());
    EXPECT_EQ(copies, (std::vector<uint64_t>{0, 1, 2, 3}));
  }
  // Another epoch, another order; the same epoch, the same.
  DistributedSampler again(options(n, w, 0, reps));
  again.set_epoch(5);
  EXPECT_EQ(shard(again), shard(all[0]));
  again.set_epoch(6);
  EXPECT_NE(shard(again), shard(all[0]));
}

TEST(SamplerRaReps, OneIsOffAndItsStateIsTheOldText) {
  DistributedSampler plain(options(1000, 3, 1, 1)), before(options(1000, 3, 1, 1));
  EXPECT_EQ(plain.length(), 334u);  // padded, not cut to 256s
  EXPECT_EQ(plain.repetition(5), 0u);
  EXPECT_EQ(plain.state(10).to_string().find("ra_reps"), std::string::npos);
}

TEST(SamplerRaReps, TheStateCarriesRaRepsAndAStateWithoutItReadsAsOne) {
  DistributedSampler s(options(1000, 4, 0, 3));
  s.set_epoch(2);
  const std::string text = s.state(10).to_string();
  EXPECT_NE(text.find(" ra_reps=3"), std::string::npos) << text;
  EXPECT_EQ(SamplerState::parse(text).ra_reps, 3u);
  EXPECT_EQ(SamplerState::parse(text).to_string(), text);
  const SamplerState old = SamplerState::parse(
      "stoker-sampler v2 seed=77 epoch=2 consumed=40 size=1000 fingerprint=0xabc shuffle=1 "
      "block=0 group=0");
  EXPECT_EQ(old.ra_reps, 1u);
  DistributedSampler resumed(options(1000, 4, 0, 1));
  resumed.restore(old);
  EXPECT_EQ(resumed.start(), 40u);
}

TEST(SamplerRaReps, AResumeOnTheSameWorldContinuesEveryPosition) {
  for (uint64_t w : {1, 2, 4, 8}) {
    for (uint64_t local : {uint64_t{0}, uint64_t{1}, uint64_t{13}, 767 / w, 768 / w}) {
      SCOPED_TRACE(testing::Message() << "w=" << w << " local=" << local);
      const auto whole = world(1000, w, 4);
      const SamplerState state = SamplerState::parse(whole[0].state(local).to_string());
      const auto rest = world(1000, w, 4, &state);
      for (uint64_t r = 0; r < w; ++r) {
        ASSERT_EQ(rest[r].length(), whole[r].length() - local);
        EXPECT_EQ(shard(rest[r]), shard(whole[r], local));
        for (uint64_t i = 0; i < rest[r].length(); ++i) {
          EXPECT_EQ(rest[r].repetition(i), whole[r].repetition(local + i));
        }
      }
    }
  }
}

// Another world size ends the epoch where RASampler on that world would: the positions
// from the resume point to that end, each once; none read before the save comes again.
TEST(SamplerRaReps, AResumeOnAnotherWorldReadsOnToThatWorldsEnd) {
  const uint64_t n = 1100;  // 1024 positions on 1, 2, 4 or 8 ranks; 1023 on 3, 1020 on 5 or 6
  for (const auto& [w1, w2] :
       std::vector<std::pair<uint64_t, uint64_t>>{{4, 3}, {3, 4}, {2, 5}, {8, 6}, {4, 4}}) {
    for (uint64_t local : {0u, 7u, 100u}) {
      SCOPED_TRACE(testing::Message() << w1 << "->" << w2 << " local=" << local);
      const auto first = world(n, w1, 3);
      const SamplerState state = first[0].state(local);
      ASSERT_EQ(state.consumed, local * w1);
      const auto rest = world(n, w2, 3, &state);
      const uint64_t end = n / 256 * 256 / w2 * w2;
      std::vector<int> seen(n * 3, 0);
      for (const auto& s : first) {
        for (uint64_t i = 0; i < local; ++i) ++seen[s.position(i)];
      }
      for (const auto& s : rest) {
        ASSERT_EQ(s.length(), (end - state.consumed) / w2);
        for (uint64_t i = 0; i < s.length(); ++i) {
          ++seen[s.position(i)];
          EXPECT_EQ(s.at(i), first[0].order(s.position(i)));
          EXPECT_EQ(s.repetition(i), s.position(i) % 3);
        }
      }
      const uint64_t dealt = state.consumed + (end - state.consumed) / w2 * w2;
      for (uint64_t p = 0; p < n * 3; ++p) EXPECT_EQ(seen[p], p < dealt ? 1 : 0) << p;
    }
  }
  // A save past the smaller world's end: that world has nothing left of the epoch.
  const auto eight = world(n, 8, 3);
  const SamplerState late = eight[0].state(eight[0].length());
  EXPECT_EQ(late.consumed, 1024u);
  EXPECT_EQ(world(n, 6, 3, &late)[0].length(), 0u);
}

TEST(FaultsSamplerRaReps, ADatasetTooSmallForOneSamplePerRankIsAnErrorNotAnEmptyEpoch) {
  const std::string todo =
      " (give ra_reps 1 for a dataset of fewer than 256 samples, or use at most as many ranks as "
      "the size rounded down to 256s)";
  EXPECT_EQ(error_text([] { DistributedSampler s(options(255, 1, 0, 4)); }),
            "sampler ra_reps: ra_reps 4 over a dataset of 255 samples on 1 rank(s) leaves each "
            "rank no sample: repeated augmentation (torchvision's RASampler) keeps floor(size / "
            "256) * 256 / world size samples per rank, and RASampler would yield an empty epoch" +
                todo);
  EXPECT_NE(error_text([] { DistributedSampler s(options(600, 513, 0, 2)); }).find("600 samples"),
            std::string::npos);
  EXPECT_EQ(error_text([] { DistributedSampler s(options(600, 512, 0, 2)); }), "(no error)");
  EXPECT_EQ(error_text([] { DistributedSampler s(options(255, 1, 0, 1)); }), "(no error)");
}

TEST(FaultsSamplerRaReps, AStateOfAnotherRaRepsIsRefused) {
  DistributedSampler four(options(1000, 4, 0, 4)), one(options(1000, 4, 0, 1));
  const std::string todo =
      " (resume with the dataset and options the state was written with, or start the epoch "
      "afresh with set_epoch())";
  EXPECT_EQ(error_text([&] { one.restore(four.state(3)); }),
            "sampler state: was written with ra_reps 4; this sampler has ra_reps 1" + todo);
  EXPECT_EQ(error_text([&] { four.restore(one.state(3)); }),
            "sampler state: was written with ra_reps 1; this sampler has ra_reps 4" + todo);
  SamplerState beyond = four.state(3);
  beyond.consumed = 4001;
  EXPECT_EQ(error_text([&] { four.restore(beyond); }),
            "sampler state: resume position 4001 is beyond the epoch of 4000 positions (1000 "
            "samples x ra_reps 4) (the state is corrupt or was edited; restart the epoch)");
}

TEST(FaultsSamplerRaReps, OptionsRepetitionCannotServeAreErrors) {
  EXPECT_EQ(error_text([] { DistributedSampler s(options(1000, 1, 0, 0)); }),
            "sampler ra_reps: is 0 (give 1 (no repetition) or more: the copies of each sample an "
            "epoch reads)");
  auto block = options(1000, 1, 0, 2);
  block.block = 10;
  EXPECT_EQ(error_text([&] { DistributedSampler s(block); }),
            "sampler ra_reps: ra_reps 2 with block 10 (repeated augmentation reads samples by "
            "index: give ra_reps 1, or read the dataset by index without block mode)");
  auto stream = options(1000, 1, 0, 2);
  stream.shards = std::make_shared<const std::vector<uint64_t>>(std::vector<uint64_t>{600, 400});
  EXPECT_NE(error_text([&] { DistributedSampler s(stream); }).find("with streamed shards"),
            std::string::npos);
  EXPECT_NE(error_text([] {
              DistributedSampler s(options(1000, 1, 0, ~uint64_t{0} / 999));
            }).find("overflows"),
            std::string::npos);
  EXPECT_NE(error_text([] {
              SamplerState::parse(
                  "stoker-sampler v2 seed=1 epoch=0 consumed=0 size=9 "
                  "fingerprint=0x0 shuffle=1 block=0 group=0 ra_reps=0");
            }).find("ra_reps must be 1 or more"),
            std::string::npos);
}
