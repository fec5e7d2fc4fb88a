// The sampler in streaming mode: every sample once per epoch over 1, 2 and 3 ranks, ranks
// reading contiguous runs of shards, the buffer's read-ahead bound, and resume (also on
// another world size, and resumed twice) with no sample repeated or lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "coverage.hpp"
#include "distributed/stream_order.hpp"
#include "error_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker {
namespace {

using testing::coverage;

const std::vector<uint64_t> kShards = {7, 13, 0, 5, 9, 1, 11, 4};  // 50 samples, one empty

SamplerOptions stream_options(uint64_t world, uint64_t rank, bool drop, uint64_t buffer,
                              bool shuffle = true, const std::vector<uint64_t>& shards = kShards) {
  SamplerOptions o;
  o.shards = std::make_shared<const std::vector<uint64_t>>(shards);
  for (uint64_t n : shards) o.size += n;
  o.seed = 99;
  o.world_size = world;
  o.rank = rank;
  o.drop_last = drop;
  o.shuffle = shuffle;
  o.shuffle_buffer = buffer;
  o.fingerprint = 0x51;
  return o;
}

// Rank r's indices from hand-out `from` to `to` (capped at its length).
std::vector<uint64_t> handouts(const DistributedSampler& s, uint64_t from = 0,
                               uint64_t to = UINT64_MAX) {
  std::vector<uint64_t> v;
  for (uint64_t i = from; i < std::min(to, s.length()); ++i) v.push_back(s.at(i));
  return v;
}

TEST(StreamOrder, EveryRankHasTheSameLengthAndEverySampleComesOncePerEpoch) {
  for (uint64_t world : {1, 2, 3}) {
    for (bool drop : {false, true}) {
      for (uint64_t buffer : {1, 4, 1000}) {
        for (uint64_t epoch : {0, 1}) {
          std::vector<std::vector<uint64_t>> lists;
          uint64_t length = 0;
          for (uint64_t r = 0; r < world; ++r) {
            DistributedSampler s(stream_options(world, r, drop, buffer));
            s.set_epoch(epoch);
            if (r == 0) length = s.length();
            ASSERT_EQ(s.length(), length) << "rank " << r << " of " << world;
            lists.push_back(handouts(s));
          }
          const auto c = coverage(lists, 50);
          SCOPED_TRACE("world " + std::to_string(world) + " drop " + std::to_string(drop));
          EXPECT_EQ(c.outside, 0u);
          if (drop) {
            EXPECT_EQ(length, 50 / world);
            EXPECT_EQ(c.repeated, 0u);
            EXPECT_EQ(c.missing, 50 % world);
          } else {
            EXPECT_EQ(length, (50 + world - 1) / world);
            EXPECT_EQ(c.missing, 0u);
            EXPECT_EQ(c.repeated, length * world - 50);  // the padding, one per short rank
          }
        }
      }
    }
  }
}

TEST(StreamOrder, RanksReadContiguousRunsOfTheEpochsShuffledShards) {
  for (uint64_t world : {1, 2, 3}) {
    uint64_t runs = 0;
    for (uint64_t r = 0; r < world; ++r) {
      DistributedSampler s(stream_options(world, r, false, 8));
      const StreamOrder& o = *s.stream_order();
      std::vector<uint32_t> shards;
      for (const StreamOrder::Run& run : o.runs()) {
        EXPECT_LE(run.first + run.count, kShards[run.shard]);
        shards.push_back(run.shard);
      }
      std::sort(shards.begin(), shards.end());
      EXPECT_EQ(std::unique(shards.begin(), shards.end()), shards.end()) << "one run per shard";
      runs += o.runs().size();
      for (uint64_t i = 0; i < o.length(); ++i) {
        EXPECT_LT(o.read_of(i), 8 + i) << "hand-out " << i << " reads further than the buffer";
      }
    }
    // Whole shards, but where a slice ends inside one: its neighbour reads the rest.
    EXPECT_LE(runs, 7 + world - 1) << world << " ranks over 7 non-empty shards";
  }
  DistributedSampler e0(stream_options(1, 0, false, 1, true));
  DistributedSampler e1 = e0;
  e1.set_epoch(1);
  std::vector<uint32_t> a, b;
  for (const auto& run : e0.stream_order()->runs()) a.push_back(run.shard);
  for (const auto& run : e1.stream_order()->runs()) b.push_back(run.shard);
  EXPECT_NE(a, b) << "the shard order is shuffled per epoch";
  DistributedSampler plain(stream_options(1, 0, false, 100, false));
  EXPECT_EQ(handouts(plain), [] {
    std::vector<uint64_t> v(50);
    for (uint64_t i = 0; i < 50; ++i) v[i] = i;
    return v;
  }()) << "shuffle off: the shards in order, each in file order";
}

TEST(StreamOrder, TheBufferShufflesWithinARankDeterministically) {
  DistributedSampler a(stream_options(2, 1, false, 16)), b(stream_options(2, 1, false, 16));
  EXPECT_EQ(handouts(a), handouts(b));
  DistributedSampler fifo(stream_options(2, 1, false, 1));
  const auto shuffled = handouts(a), in_order = handouts(fifo);
  EXPECT_NE(shuffled, in_order);
  EXPECT_TRUE(std::is_permutation(shuffled.begin(), shuffled.end(), in_order.begin()));
}

// Runs `phases` of (world, batches of `step` hand-outs per rank), each resumed from the
// state the previous left, then the rest on `last_world`; returns every hand-out.
std::vector<std::vector<uint64_t>> resumed(const std::vector<StreamPhase>& phases,
                                           uint64_t last_world, bool drop, std::string* text) {
  std::vector<std::vector<uint64_t>> lists;
  std::optional<SamplerState> state;
  auto run = [&](uint64_t world, uint64_t count) {
    std::optional<SamplerState> next;
    for (uint64_t r = 0; r < world; ++r) {
      DistributedSampler s(stream_options(world, r, drop, 6));
      if (state) s.restore(SamplerState::parse(state->to_string()));
      lists.push_back(handouts(s, 0, count));
      const SamplerState mine = s.state(std::min(count, s.length()));
      if (next) {
        EXPECT_EQ(mine.to_string(), next->to_string()) << "ranks agree on the state";
      }
      next = mine;
    }
    state = next;
  };
  for (const StreamPhase& p : phases) run(p.world, p.consumed);
  if (text) *text = state->to_string();
  run(last_world, UINT64_MAX);
  return lists;
}

TEST(StreamOrder, AResumedEpochCoversEverySampleOnceOnAnyWorldSize) {
  for (uint64_t w0 : {1, 2, 3}) {
    for (uint64_t w1 : {1, 2, 3}) {
      for (uint64_t consumed : {1, 5, 9}) {
        SCOPED_TRACE(std::to_string(w0) + " ranks x " + std::to_string(consumed) + ", then " +
                     std::to_string(w1) + " ranks");
        const auto drop = coverage(resumed({{w0, consumed}}, w1, true, nullptr), 50);
        EXPECT_EQ(drop.repeated, 0u);
        EXPECT_LT(drop.missing, w1) << "only the last phase's tail is dropped";
        const auto pad = coverage(resumed({{w0, consumed}}, w1, false, nullptr), 50);
        EXPECT_EQ(pad.missing, 0u);
        EXPECT_LE(pad.repeated, w0 + w1) << "padding only";
      }
    }
  }
  std::string text;
  const auto twice = coverage(resumed({{3, 4}, {1, 7}}, 2, true, &text), 50);
  EXPECT_EQ(twice.repeated, 0u);
  EXPECT_LT(twice.missing, 2u);
  EXPECT_NE(text.find(" buffer=6 phases=3:4,1:7"), std::string::npos) << text;
}

TEST(StreamOrder, StateTextRoundTripsAndOldStatesStillParse) {
  DistributedSampler s(stream_options(2, 0, false, 6));
  const SamplerState st = s.state(3);
  const SamplerState back = SamplerState::parse(st.to_string());
  EXPECT_TRUE(back.stream);
  EXPECT_EQ(back.buffer, 6u);
  EXPECT_EQ(back.phases, (std::vector<StreamPhase>{{2, 3}}));
  EXPECT_EQ(back.consumed, 6u);
  const SamplerState fresh = SamplerState::parse(s.state(0).to_string());
  EXPECT_TRUE(fresh.stream);
  EXPECT_TRUE(fresh.phases.empty());
  const SamplerState by_index = SamplerState::parse(
      "stoker-sampler v1 seed=1 epoch=0 consumed=0 size=5 fingerprint=0x1 shuffle=1 block=0 "
      "group=0");
  EXPECT_FALSE(by_index.stream);
}

TEST(FaultsStreamResume, StatesThatDoNotFitTheStreamAreClearErrors) {
  DistributedSampler s(stream_options(2, 0, false, 6));
  SamplerState st = s.state(3);
  st.phases[0].consumed = 26;  // more than a rank's 25 hand-outs
  EXPECT_NE(test::error_text([&] { s.restore(st); }).find("the state is corrupt"),
            std::string::npos);
  st = s.state(3);
  DistributedSampler other_buffer(stream_options(2, 0, false, 7));
  EXPECT_NE(test::error_text([&] { other_buffer.restore(st); }).find("shuffle buffer of 6"),
            std::string::npos);
  SamplerOptions by_index = stream_options(2, 0, false, 6);
  by_index.shards.reset();
  DistributedSampler indexed(by_index);
  EXPECT_NE(test::error_text([&] { indexed.restore(st); }).find("streams its shards"),
            std::string::npos);
  EXPECT_NE(test::error_text([] {
              SamplerState::parse(
                  "stoker-sampler v1 seed=1 epoch=0 consumed=0 size=5 "
                  "fingerprint=0x1 shuffle=1 block=0 group=0 "
                  "buffer=3 phases=2");
            }).find("WORLD:CONSUMED"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker
