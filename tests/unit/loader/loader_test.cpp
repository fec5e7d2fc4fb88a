// The loader end to end on real token and record files: order, epochs, prefetch of the
// next epoch, persistent threads, early exits, failures, held batches and resume. The ring's
// sizing and the two ways to build a loader are in loader_ring_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"

using namespace stoker;
using namespace std::chrono_literals;
using stoker::test::error_of;
using stoker::test::TempDir;
using stoker::test::TokenSetup;

namespace {

constexpr uint64_t kSeqLen = 64;

// The indices the loader must deliver for an epoch, in order.
std::vector<uint64_t> expected_order(const Loader& loader, uint64_t epoch) {
  DistributedSampler s = loader.sampler();
  s.set_epoch(epoch);
  std::vector<uint64_t> v(s.length());
  for (uint64_t i = 0; i < v.size(); ++i) v[i] = s.at(i);
  return v;
}

int thread_count() {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.exists();
  return n;
}

}  // namespace

TEST(Loader, DeliversEveryBatchInSamplerOrderWithItsData) {
  TokenSetup t(1000);
  // Uneven work (every 13th sample is slow) so that workers finish out of order.
  auto slow = std::make_shared<test::SlowCopy>(t.source->spec(), 13, 300us);
  Loader loader(t.source, slow, test::test_options(16, 3, 4));
  EXPECT_EQ(loader.length(), 1000u);
  EXPECT_EQ(loader.batches_per_epoch(), 63u);  // 62 full + one of 8
  std::vector<uint64_t> got;
  uint64_t number = 0;
  for (Batch& b : loader) {
    EXPECT_EQ(b.epoch(), 0u);
    EXPECT_EQ(b.number(), number++);
    EXPECT_EQ(b.capacity(), 16u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
    test::expect_windows(b, kSeqLen);
    for (size_t k = 0; k < b.size(); ++k) EXPECT_EQ(b.labels()[k], 0);
    got.insert(got.end(), b.indices().begin(), b.indices().end());
  }
  EXPECT_EQ(number, 63u);
  EXPECT_EQ(got, expected_order(loader, 0));
  LoaderStats st = loader.stats();
  EXPECT_EQ(st.batches, 63u);
  EXPECT_EQ(st.samples, 1000u);
  EXPECT_EQ(st.bytes, 1000u * (kSeqLen + 1) * 2);
  EXPECT_GT(st.stages.read_ns, 0u);
  EXPECT_GT(st.stages.collate_ns, 0u);
  EXPECT_GE(st.produce_ns, st.stages.read_ns + st.stages.collate_ns);
  EXPECT_GT(st.wall_ns, 0u);
  EXPECT_GE(st.wait_share, 0.0);
  EXPECT_LE(st.wait_share, 1.0);
  ASSERT_EQ(st.epoch_first_batch.size(), 1u);
  EXPECT_EQ(st.workers, 3);
  EXPECT_FALSE(st.summary().empty());
}

TEST(Loader, DropLastAndNoShuffle) {
  TokenSetup t(100);
  LoaderOptions o = test::test_options(16, 2);
  o.drop_last = true;
  o.shuffle = false;
  Loader loader(t.source, t.copy, o);
  EXPECT_EQ(loader.batches_per_epoch(), 6u);
  uint64_t next = 0, batches = 0;
  for (Batch& b : loader) {
    ++batches;
    ASSERT_EQ(b.size(), 16u);
    for (uint64_t i : b.indices()) EXPECT_EQ(i, next++);
  }
  EXPECT_EQ(batches, 6u);
}

TEST(Loader, EpochsChangeOrderAndReuseTheSameThreads) {
  TokenSetup t(300);
  Loader loader(t.source, t.copy, test::test_options(32, 2));
  const int threads = thread_count();
  std::vector<std::vector<uint64_t>> orders;
  for (uint64_t e = 0; e < 4; ++e) {
    loader.set_epoch(e);
    std::vector<uint64_t> got;
    for (Batch& b : loader) {
      EXPECT_EQ(b.epoch(), e);
      got.insert(got.end(), b.indices().begin(), b.indices().end());
    }
    EXPECT_EQ(got, expected_order(loader, e)) << "epoch " << e;
    orders.push_back(got);
    EXPECT_EQ(thread_count(), threads) << "epoch " << e;
  }
  EXPECT_NE(orders[0], orders[1]);
  LoaderStats st = loader.stats();
  EXPECT_EQ(st.threads_created, 2u);
  EXPECT_EQ(st.epoch_first_batch.size(), 4u);
  EXPECT_EQ(st.discarded_batches, 0u);  // every prefetched next-epoch batch was used
}

TEST(Loader, WithoutSetEpochTheNextLoopIsTheNextEpoch) {
  TokenSetup t(100);
  Loader loader(t.source, t.copy, test::test_options(32, 2));
  for (uint64_t e = 0; e < 3; ++e) {
    EXPECT_EQ(loader.epoch(), e);
    uint64_t n = 0;
    for (Batch& b : loader) {
      EXPECT_EQ(b.epoch(), e);
      ++n;
    }
    EXPECT_EQ(n, 4u);
  }
}

TEST(Loader, NextEpochsFirstBatchIsPreparedWhileTheEpochDrains) {
  TokenSetup t(256);
  Loader loader(t.source, t.copy, test::test_options(32, 2, 4));
  for (uint64_t e = 0; e < 3; ++e) {
    loader.set_epoch(e);
    for (Batch& b : loader) {
      (void)b;
      std::this_thread::sleep_for(2ms);  // a training step: the workers get ahead
    }
    // An evaluation between epochs: the workers have long made the next epoch's first
    // batches, by themselves (the next loop has not started).
    std::this_thread::sleep_for(50ms);
  }
  LoaderStats st = loader.stats();
  ASSERT_EQ(st.epoch_first_batch.size(), 3u);
  for (size_t e = 1; e < 3; ++e) {
    EXPECT_EQ(st.epoch_first_batch[e].epoch, e);
    // Ready when asked: no wait at all (a wait counts from asking for that very batch).
    EXPECT_EQ(st.epoch_first_batch[e].wait_ns, 0u) << "epoch " << e;
  }
}

TEST(Loader, AnotherEpochThanPreparedDiscardsWithoutLoss) {
  TokenSetup t(200);
  Loader loader(t.source, t.copy, test::test_options(16, 2, 4));
  for (Batch& b : loader) {
    (void)b;
    std::this_thread::sleep_for(1ms);
  }
  loader.set_epoch(7);  // epoch 1 was prepared; 7 is asked
  std::vector<uint64_t> got;
  for (Batch& b : loader) {
    EXPECT_EQ(b.epoch(), 7u);
    got.insert(got.end(), b.indices().begin(), b.indices().end());
  }
  EXPECT_EQ(got, expected_order(loader, 7));
  EXPECT_GT(loader.stats().discarded_batches, 0u);
}

TEST(FaultsLoader, BreakingOutEarlyRestartsTheEpochCleanly) {
  TokenSetup t(500);
  Loader loader(t.source, t.copy, test::test_options(16, 2, 4));
  int n = 0;
  for (Batch& b : loader) {
    (void)b;
    if (++n == 3) break;
  }
  EXPECT_EQ(loader.epoch(), 0u);
  EXPECT_EQ(loader.state().consumed, 48u);
  std::vector<uint64_t> got;
  for (Batch& b : loader) got.insert(got.end(), b.indices().begin(), b.indices().end());
  EXPECT_EQ(got, expected_order(loader, 0));  // the loop starts the epoch from its beginning
}

TEST(FaultsLoader, DestroyedMidEpochWhileBatchesAreHeld) {
  TokenSetup t(2000);
  std::vector<Batch> kept;
  {
    Loader loader(t.source, t.copy, test::test_options(16, 2, 4));
    for (int i = 0; i < 2; ++i) kept.push_back(*loader.next());
  }  // workers stop and join here, mid-epoch, with the ring full
  for (Batch& b : kept) test::expect_windows(b, kSeqLen);  // the slots outlive the loader
  kept.clear();
}

TEST(FaultsLoader, DestroyedWhileWorkersAreBusy) {
  TokenSetup t(2000);
  auto slow = std::make_shared<test::SlowCopy>(t.source->spec(), 1, 200us);
  Loader loader(t.source, slow, test::test_options(16, 2, 8));
  (void)loader.next();
}

TEST(Loader, ExceptionInAWorkerReachesTheConsumerWithIndexAndFile) {
  TempDir dir;
  const std::string path = test::write_records(dir, 200, 64);
  auto source = std::make_shared<RecordFileSource>(path, 64, dir.file("labels.bin"));
  // Not a SampleError: an unexpected failure inside a transform.
  struct Throwing : CopyTransform {
    using CopyTransform::CopyTransform;
    void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& s,
               StageTimes& t) const override {
      if (key.index == 123) throw std::runtime_error("decoder exploded");
      CopyTransform::apply(in, key, out, s, t);
    }
  };
  LoaderOptions o = test::test_options(10, 2);
  o.shuffle = false;                   // sample 123 is in batch 12
  o.on_corrupt = CorruptPolicy::Skip;  // Skip covers corrupt samples, not failures
  Loader loader(source, std::make_shared<Throwing>(source->spec()), o);
  std::string what;
  try {
    for (Batch& b : loader) (void)b;
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_EQ(what, path +
                      "@7872: reading sample 123 failed: decoder exploded (fix or remove the "
                      "sample; on_corrupt covers corrupt samples, not this failure)");
  EXPECT_FALSE(loader.next().has_value());  // the failed loop is over
  // The loader stays usable: the next loop starts over.
  loader.start_epoch();
  EXPECT_EQ(loader.next()->number(), 0u);
}

TEST(Loader, CorruptSamplesErrorPolicyNamesFileAndOffset) {
  TempDir dir;
  const std::string path = test::write_records(dir, 100, 32, {42});
  auto source = std::make_shared<RecordFileSource>(path, 32);
  Loader loader(source, std::make_shared<test::ChecksumCopy>(source->spec()),
                test::test_options(8, 2));
  EXPECT_EQ(error_of([&] {
              for (Batch& b : loader) (void)b;
            }),
            path +
                "@1344: sample 42 is corrupt: checksum mismatch (fix or remove the file, or "
                "use on_corrupt = CorruptPolicy::Skip to leave corrupt samples out)");
}

TEST(Loader, CorruptSamplesSkipPolicyCountsAndKeepsStepCount) {
  TempDir dir;
  std::set<uint64_t> corrupt;
  for (uint64_t i = 3; i < 300; i += 7) corrupt.insert(i);
  for (uint64_t i = 96; i < 104; ++i) corrupt.insert(i);  // all of batch 12
  const std::string path = test::write_records(dir, 300, 40, corrupt);
  auto source = std::make_shared<RecordFileSource>(path, 40, dir.file("labels.bin"));
  LoaderOptions o = test::test_options(8, 2);
  o.shuffle = false;
  o.on_corrupt = CorruptPolicy::Skip;
  o.max_skip_fraction = 1.0;  // a sixth of the records are corrupt
  Loader loader(source, std::make_shared<test::ChecksumCopy>(source->spec()), o);
  std::set<uint64_t> seen;
  uint64_t batches = 0;
  for (Batch& b : loader) {
    if (b.number() == 12) {
      EXPECT_EQ(b.size(), 0u);  // delivered empty, not left out
    }
    ++batches;
    EXPECT_LE(b.size(), 8u);
    for (size_t k = 0; k < b.size(); ++k) {
      EXPECT_EQ(corrupt.count(b.indices()[k]), 0u);
      EXPECT_EQ(b.labels()[k], static_cast<int64_t>(b.indices()[k] * 10));
      seen.insert(b.indices()[k]);
    }
  }
  EXPECT_EQ(batches, loader.batches_per_epoch());  // the same number of steps
  EXPECT_EQ(seen.size() + corrupt.size(), 300u);
  EXPECT_EQ(loader.stats().skipped, corrupt.size());
}

TEST(FaultsLoader, HeldBatchesUpToTheSlotCountThenAClearError) {
  TokenSetup t(2000);
  LoaderOptions o = test::test_options(16, 2, 2);
  o.held_batches = 3;
  Loader loader(t.source, t.copy, o);
  const int slots = loader.stats().slots;
  std::vector<Batch> held;
  std::string what;
  try {
    for (int i = 0; i < slots + 1; ++i) held.push_back(*loader.next());
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_EQ(static_cast<int>(held.size()), slots);
  EXPECT_NE(what.find("holds all " + std::to_string(slots) + " batch slots"), std::string::npos)
      << what;
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i].number(), i);
    test::expect_windows(held[i], kSeqLen);
  }
  held.clear();  // releasing lets the loop go on
  EXPECT_TRUE(loader.next().has_value());
}

TEST(Loader, ResumeCoversTheEpochExactlyOnce) {
  TokenSetup t(500);
  std::vector<uint64_t> first;
  SamplerState state;
  {
    Loader loader(t.source, t.copy, test::test_options(16, 2));
    loader.set_epoch(3);
    for (int i = 0; i < 10; ++i) {
      Batch b = *loader.next();
      first.insert(first.end(), b.indices().begin(), b.indices().end());
    }
    state = loader.state();
  }
  EXPECT_EQ(state.epoch, 3u);
  EXPECT_EQ(state.consumed, 160u);
  Loader loader(t.source, t.copy, test::test_options(16, 2));
  loader.restore(state);
  loader.set_epoch(3);  // PyTorch style set_epoch before the loop keeps the restore
  std::vector<uint64_t> rest;
  for (Batch& b : loader) {
    EXPECT_EQ(b.epoch(), 3u);
    rest.insert(rest.end(), b.indices().begin(), b.indices().end());
  }
  first.insert(first.end(), rest.begin(), rest.end());
  EXPECT_EQ(first, expected_order(loader, 3));
  EXPECT_EQ(loader.epoch(), 4u);
  EXPECT_EQ(loader.state().epoch, 4u);
  EXPECT_EQ(loader.state().consumed, 0u);
}

TEST(Loader, ShardsForTwoRanksAreDisjointAndComplete) {
  TokenSetup t(301);
  std::set<uint64_t> all;
  uint64_t lengths[2];
  for (uint64_t r = 0; r < 2; ++r) {
    LoaderOptions o = test::test_options(10, 1);
    o.world_size = 2;
    o.rank = r;
    o.drop_last = true;
    Loader loader(t.source, t.copy, o);
    lengths[r] = 0;
    for (Batch& b : loader) {
      lengths[r] += b.size();
      for (uint64_t i : b.indices()) EXPECT_TRUE(all.insert(i).second) << i;
    }
  }
  EXPECT_EQ(lengths[0], lengths[1]);
  EXPECT_EQ(all.size(), 300u);  // 150 per rank, in 15 batches each
}
