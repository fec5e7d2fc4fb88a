#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "coverage.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

using stoker::DistributedSampler;
using stoker::SamplerOptions;
using stoker::SamplerState;
using stoker::testing::coverage;

namespace {
SamplerOptions options(uint64_t size, uint64_t world, uint64_t rank, bool drop = false,
                       uint64_t block = 0) {
  SamplerOptions o;
  o.size = size;
  o.seed = 1234;
  o.world_size = world;
  o.rank = rank;
  o.drop_last = drop;
  o.block = block;
  o.fingerprint = 0xabc;
  return o;
}

std::vector<uint64_t> shard(const DistributedSampler& s, uint64_t from = 0) {
  std::vector<uint64_t> v;
  for (uint64_t i = from; i < s.length(); ++i) v.push_back(s.at(i));
  return v;
}

std::vector<DistributedSampler> ranks(uint64_t size, uint64_t world, bool drop, uint64_t block,
                                      uint64_t epoch = 0) {
  std::vector<DistributedSampler> all;
  for (uint64_t r = 0; r < world; ++r) {
    all.emplace_back(options(size, world, r, drop, block));
    all.back().set_epoch(epoch);
  }
  return all;
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const stoker::Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(Sampler, EqualLengthsAndEveryEpochCoveredOnce) {
  for (uint64_t n : {1, 2, 3, 7, 10, 97, 1000, 1001}) {
    for (uint64_t w : {1, 2, 3, 4, 7, 16}) {
      for (bool drop : {false, true}) {
        for (uint64_t block : {0, 1, 5, 64}) {
          SCOPED_TRACE(testing::Message()
                       << "n=" << n << " w=" << w << " drop=" << drop << " block=" << block);
          const uint64_t len = drop ? n / w : (n + w - 1) / w;
          std::vector<std::vector<uint64_t>> lists;
          for (const auto& s : ranks(n, w, drop, block, 3)) {
            EXPECT_EQ(s.length(), len);
            lists.push_back(shard(s));
          }
          const auto c = coverage(lists, n);
          EXPECT_EQ(c.outside, 0u);
          EXPECT_EQ(c.missing, drop ? n - len * w : 0);
          EXPECT_EQ(c.repeated, drop ? 0 : len * w - n);
        }
      }
    }
  }
}

TEST(Sampler, UnshuffledMatchesTorchDistributedSampler) {
  // torch.utils.data.DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False)
  const std::vector<std::vector<uint64_t>> pad = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  const std::vector<std::vector<uint64_t>> drop = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (uint64_t r = 0; r < 4; ++r) {
    auto o = options(10, 4, r);
    o.shuffle = false;
    EXPECT_EQ(shard(DistributedSampler(o)), pad[r]);
    o.drop_last = true;
    EXPECT_EQ(shard(DistributedSampler(o)), drop[r]);
  }
  // Fewer samples than ranks: torch repeats the list as often as needed.
  for (uint64_t r = 0; r < 8; ++r) {
    auto o = options(3, 8, r);
    o.shuffle = false;
    EXPECT_EQ(shard(DistributedSampler(o)), std::vector<uint64_t>{r % 3});
  }
}

TEST(Sampler, ShardsFollowTheGlobalOrder) {
  const auto all = ranks(1000, 4, false, 0, 2);
  for (uint64_t r = 0; r < 4; ++r) {
    for (uint64_t i = 0; i < all[r].length(); ++i) {
      EXPECT_EQ(all[r].at(i), stoker::permute_index(i * 4 + r, 1000, 1234, 2));
    }
  }
}

TEST(Sampler, OrdersDifferAcrossEpochsAndAreIdenticalAcrossRuns) {
  for (uint64_t block : {0, 10}) {
    DistributedSampler a(options(1000, 4, 1, false, block)), b(options(1000, 4, 1, false, block));
    a.set_epoch(5);
    b.set_epoch(5);
    EXPECT_EQ(shard(a), shard(b));
    const auto e5 = shard(a);
    a.set_epoch(6);
    EXPECT_NE(shard(a), e5);
    auto other_seed = options(1000, 4, 1, false, block);
    other_seed.seed = 99;
    DistributedSampler c(other_seed);
    c.set_epoch(5);
    EXPECT_NE(shard(c), e5);
  }
}

namespace {
// Phase 1 on w1 ranks consumes `local` indices each, phase 2 restores on w2 ranks and
// reads to the end (and phase 3 on w3 ranks, when given). Returns every index read.
std::vector<std::vector<uint64_t>> resume_run(uint64_t n, bool drop, uint64_t block,
                                              std::vector<uint64_t> worlds,
                                              std::vector<uint64_t> locals, uint64_t* padding) {
  std::vector<std::vector<uint64_t>> lists;
  SamplerState state;
  bool restored = false;
  *padding = 0;
  for (size_t phase = 0; phase < worlds.size(); ++phase) {
    auto all = ranks(n, worlds[phase], drop, block, 7);
    if (restored) {
      for (auto& s : all) s.restore(state);
    }
    const bool last = phase + 1 == worlds.size();
    const uint64_t len = all[0].length();
    const uint64_t take = last ? len : std::min(locals[phase], len);
    const uint64_t remaining = n - all[0].start();
    *padding += take * worlds[phase] > remaining ? take * worlds[phase] - remaining : 0;
    for (auto& s : all) {
      std::vector<uint64_t> v;
      for (uint64_t i = 0; i < take; ++i) v.push_back(s.at(i));
      lists.push_back(v);
    }
    if (!last) {
      state = all[0].state(take);
      for (auto& s : all) EXPECT_EQ(s.state(take).to_string(), state.to_string());
      state = SamplerState::parse(state.to_string());  // as if written to a checkpoint
      restored = true;
    }
  }
  return lists;
}
}  // namespace

TEST(Sampler, ElasticResumeCoversTheEpochExactlyOnce) {
  for (const auto& worlds : std::vector<std::vector<uint64_t>>{{4, 3}, {2, 5}, {4, 3, 5}, {3, 3}}) {
    for (uint64_t n : {10, 97, 1000, 1003}) {
      for (bool drop : {false, true}) {
        for (uint64_t block : {0, 8}) {
          const uint64_t first_len = drop ? n / worlds[0] : (n + worlds[0] - 1) / worlds[0];
          for (uint64_t local :
               {uint64_t{0}, uint64_t{1}, first_len / 3, first_len - 1, first_len}) {
            SCOPED_TRACE(testing::Message()
                         << "worlds=" << worlds[0] << "->" << worlds[1] << " n=" << n
                         << " drop=" << drop << " block=" << block << " local=" << local);
            uint64_t padding = 0;
            const auto lists = resume_run(n, drop, block, worlds, {local, local / 2 + 1}, &padding);
            const auto c = coverage(lists, n);
            EXPECT_EQ(c.outside, 0u);
            if (drop) {
              EXPECT_EQ(c.repeated, 0u);
              EXPECT_LT(c.missing, worlds.back());  // only the last phase's tail is dropped
            } else {
              EXPECT_EQ(c.missing, 0u);
              EXPECT_EQ(c.repeated, padding);
            }
          }
        }
      }
    }
  }
}

TEST(Sampler, StateCountsGlobalPositionsAndCapsAtTheEpoch) {
  DistributedSampler s(options(10, 4, 2));
  EXPECT_EQ(s.state(0).consumed, 0u);
  EXPECT_EQ(s.state(2).consumed, 8u);
  EXPECT_EQ(s.state(3).consumed, 10u);  // 12 dealt, 2 of them padding
  DistributedSampler t(options(10, 3, 0));
  t.restore(s.state(3));
  EXPECT_EQ(t.length(), 0u);  // the epoch is done
  t.restore(s.state(2));
  EXPECT_EQ(t.length(), 1u);  // positions 8, 9 over 3 ranks, padded
  EXPECT_EQ(t.start(), 8u);
}

TEST(Sampler, NodeAwareModeReadsWholeRuns) {
  const uint64_t n = 1000, k = 10, w = 4;
  std::set<uint64_t> runs_seen;
  for (const auto& s : ranks(n, w, false, k, 1)) {
    const auto v = shard(s);
    ASSERT_EQ(v.size() % k, 0u);
    for (size_t j = 0; j < v.size(); j += k) {
      const uint64_t run = v[j] / k;
      EXPECT_TRUE(runs_seen.insert(run).second) << "run " << run << " read by two ranks";
      std::vector<uint64_t> in_run(v.begin() + j, v.begin() + j + k);
      for (uint64_t x : in_run) EXPECT_EQ(x / k, run);
      EXPECT_FALSE(std::is_sorted(in_run.begin(), in_run.end())) << "not shuffled in run";
    }
  }
  EXPECT_EQ(runs_seen.size(), n / k);
  // Run order changes with the epoch.
  auto a = ranks(n, w, false, k, 1), b = ranks(n, w, false, k, 2);
  EXPECT_NE(a[0].at(0) / k, b[0].at(0) / k);
}

TEST(Sampler, BadInputsAreClearErrors) {
  EXPECT_EQ(error_of([] { DistributedSampler s(options(10, 0, 0)); }),
            "sampler world size: is 0; a job has at least one rank (set --world-size, WORLD_SIZE "
            "or SLURM_NTASKS to the number of ranks)");
  EXPECT_EQ(error_of([] { DistributedSampler s(options(10, 4, 4)); }),
            "sampler rank: rank 4 is not below the world size 4 (ranks are numbered 0 to world "
            "size - 1)");
  EXPECT_EQ(error_of([] { DistributedSampler s(options(0, 4, 0)); }),
            "sampler dataset size: the dataset has 0 samples (check the dataset path and that it "
            "holds samples)");

  DistributedSampler s(options(1000, 4, 0));
  s.set_epoch(2);
  const SamplerState good = s.state(10);
  const std::string todo =
      " (resume with the dataset and options the state was written with, or start the epoch "
      "afresh with set_epoch())";
  auto restore_with = [&](auto edit) {
    SamplerState st = good;
    edit(st);
    return error_of([&] { DistributedSampler(options(1000, 3, 0)).restore(st); });
  };
  EXPECT_EQ(restore_with([](SamplerState& st) { st.size = 999; }),
            "sampler state: is from a dataset of 999 samples; this dataset has 1000" + todo);
  EXPECT_EQ(restore_with([](SamplerState& st) { st.fingerprint = 0xdef; }),
            "sampler state: is from a dataset with fingerprint 0x0000000000000def; this dataset's "
            "fingerprint is 0x0000000000000abc (same size, but other names, sizes or content)" +
                todo);
  EXPECT_EQ(restore_with([](SamplerState& st) { st.seed = 1; }),
            "sampler state: was written with seed 1; this sampler has seed 1234" + todo);
  EXPECT_EQ(restore_with([](SamplerState& st) { st.shuffle = false; }),
            "sampler state: was written with shuffle off; this sampler has shuffle on" + todo);
  EXPECT_EQ(restore_with([](SamplerState& st) {
              st.block = 8;
              st.group = 4;
            }),
            "sampler state: was written with block 8; this sampler has block 0" + todo);
  EXPECT_EQ(restore_with([](SamplerState& st) { st.version = 3; }),
            "sampler state: format version 3 is not readable; this build reads versions 1 to 2 "
            "(resume with the stoker version that wrote the state, or restart the epoch)");
  EXPECT_EQ(restore_with([](SamplerState& st) { st.consumed = 1001; }),
            "sampler state: resume position 1001 is beyond the epoch of 1000 samples (the state is "
            "corrupt or was edited; restart the epoch)");
  EXPECT_EQ(restore_with([](SamplerState& st) { st.group = 3; }),
            "sampler state: group 3 does not fit block 0 (both are 0, or both are positive) (the "
            "state is corrupt or was edited; restart the epoch)");
  EXPECT_EQ(error_of([&] { s.state(251); }),
            "sampler state: local position 251 is beyond rank 0's 250 samples of epoch 2 (pass how "
            "many of this epoch's indices the rank has consumed)");
  EXPECT_EQ(error_of([&] { s.at(250); }),
            "sampler: index 250 is beyond rank 0's length 250 in epoch 2");
}

// A state saved before fingerprints read content (format v1) must still resume after an
// upgrade: its fingerprint was made by the older rule, so it cannot equal today's and is
// not compared. A fingerprint of 0 (none could be made, on either side) is not compared
// either. Size, seed, shuffle and block are checked as always.
TEST(FaultsSamplerState, AStateFromBeforeContentFingerprintsStillResumes) {
  DistributedSampler saver(options(1000, 4, 0));
  saver.set_epoch(2);
  SamplerState old = saver.state(10);
  old.version = 1;
  old.fingerprint = 0x1234;  // the names-and-sizes hash of the older rule
  const SamplerState v1 = SamplerState::parse(old.to_string());
  ASSERT_EQ(v1.version, 1u);

  DistributedSampler resumed(options(1000, 4, 0));
  EXPECT_EQ(error_of([&] { resumed.restore(v1); }), "no error");
  EXPECT_EQ(resumed.epoch(), 2u);

  SamplerState unchecked = saver.state(10);
  unchecked.fingerprint = 0;
  EXPECT_EQ(error_of([&] { DistributedSampler(options(1000, 4, 0)).restore(unchecked); }),
            "no error");
  SamplerState v1_other_size = v1;
  v1_other_size.size = 999;
  EXPECT_NE(error_of([&] { DistributedSampler(options(1000, 4, 0)).restore(v1_other_size); }),
            "no error");
}
