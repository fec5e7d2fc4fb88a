// The loader over streamed tar shards: every sample exactly once per epoch across 1, 2
// and 3 ranks (ranks simulated by rank/world_size options), each batch's data being its
// indices' samples; resume mid-epoch on the same and on another world size; a shard that
// breaks while being streamed stops the epoch with an error naming it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/tar_source.hpp"
#include "tar_writer.hpp"

using namespace stoker;

namespace {

constexpr size_t kSampleBytes = 16;
const std::vector<int> kShardSizes = {7, 13, 5, 9, 1, 11, 4};  // 50 samples

// Sample i holds "sample %08d   " (16 bytes) and label i % 7.
std::string payload(uint64_t i) {
  char b[kSampleBytes + 1];
  std::snprintf(b, sizeof b, "sample %08llu ", static_cast<unsigned long long>(i));
  return std::string(b, kSampleBytes);
}

struct Shards {
  test::TempDir dir;
  std::vector<std::string> paths;
  Shards() {
    ::setenv("STOKER_CACHE_DIR", "none", 1);
    uint64_t i = 0;
    for (size_t s = 0; s < kShardSizes.size(); ++s) {
      test::TarWriter w;
      for (int k = 0; k < kShardSizes[s]; ++k, ++i) {
        w.add("s" + std::to_string(s) + "/" + std::to_string(i) + ".jpg", payload(i));
        w.add("s" + std::to_string(s) + "/" + std::to_string(i) + ".cls", std::to_string(i % 7));
      }
      const auto tar = w.finish();
      const auto gz = s % 2 ? test::gzip_bytes(tar) : tar;  // plain and compressed mixed
      paths.push_back(dir.file("shard" + std::to_string(s) + (s % 2 ? ".tar.gz" : ".tar")));
      test::write_bytes(paths.back(), gz.data(), gz.size());
    }
  }
  ~Shards() { ::unsetenv("STOKER_CACHE_DIR"); }
  std::shared_ptr<TarShardSource> source() const {
    return std::make_shared<TarShardSource>(paths, TarShardOptions{.labels = true, .stream = true});
  }
};

LoaderOptions stream_options(uint64_t world, uint64_t rank, bool drop_last = false) {
  LoaderOptions o = test::test_options(4, 2, 2);
  o.world_size = world;
  o.rank = rank;
  o.drop_last = drop_last;
  o.shuffle_buffer = 6;
  return o;
}

// Starts a loop and takes up to `batches` batches (all when 0), checking each sample's
// bytes and label against its index; appends the indices to `seen`.
void take(Loader& loader, std::vector<uint64_t>& seen, uint64_t batches = 0) {
  loader.start_epoch();
  uint64_t n = 0;
  while (batches == 0 || n < batches) {
    std::optional<Batch> b = loader.next();
    if (!b) return;
    ++n;
    for (size_t k = 0; k < b->size(); ++k) {
      const uint64_t i = b->indices()[k];
      ASSERT_EQ(
          std::string(reinterpret_cast<const char*>(b->data()) + k * kSampleBytes, kSampleBytes),
          payload(i));
      ASSERT_EQ(b->labels()[k], static_cast<int64_t>(i % 7));
      seen.push_back(i);
    }
  }
}

std::map<uint64_t, int> counts(const std::vector<uint64_t>& seen) {
  std::map<uint64_t, int> c;
  for (uint64_t i : seen) ++c[i];
  return c;
}

TEST(StreamLoader, EverySampleExactlyOncePerEpochAcrossOneTwoAndThreeRanks) {
  Shards shards;
  const auto src = shards.source();
  auto copy = std::make_shared<CopyTransform>(SampleSpec{DType::U8, {kSampleBytes}});
  for (uint64_t world : {1, 2, 3}) {
    for (bool drop : {false, true}) {
      std::vector<std::unique_ptr<Loader>> ranks;
      for (uint64_t r = 0; r < world; ++r) {
        ranks.push_back(std::make_unique<Loader>(src, copy, stream_options(world, r, drop)));
      }
      for (uint64_t epoch : {0, 1}) {
        std::vector<uint64_t> seen;
        for (auto& l : ranks) {
          l->set_epoch(epoch);
          EXPECT_EQ(l->length(), ranks[0]->length());
          take(*l, seen);
        }
        SCOPED_TRACE(std::to_string(world) + " ranks, drop_last " + std::to_string(drop) +
                     ", epoch " + std::to_string(epoch));
        const auto c = counts(seen);
        if (drop) {
          EXPECT_EQ(seen.size(), c.size()) << "no sample twice";
          EXPECT_EQ(c.size(), ranks[0]->batches_per_epoch() * 4 * world) << "whole batches";
          EXPECT_EQ(ranks[0]->length(), 50 / world);
        } else {
          EXPECT_EQ(c.size(), 50u) << "every sample";
          EXPECT_EQ(seen.size(), ranks[0]->length() * world);
          EXPECT_LE(seen.size() - 50, world - 1) << "repeats are the padding only";
        }
      }
      const LoaderStats st = ranks[0]->stats();
      EXPECT_GT(st.stream_reads.reads, 0u);
      EXPECT_FALSE(st.notes.empty());
    }
  }
}

TEST(StreamLoader, ResumeMidEpochOnTheSameAndOnAnotherWorldSize) {
  Shards shards;
  const auto src = shards.source();
  auto copy = std::make_shared<CopyTransform>(SampleSpec{DType::U8, {kSampleBytes}});
  for (uint64_t w1 : {2, 3, 1}) {
    std::vector<uint64_t> seen;
    std::string state;
    for (uint64_t r = 0; r < 2; ++r) {  // two ranks take 3 batches each, then stop
      Loader l(src, copy, stream_options(2, r));
      l.set_epoch(5);
      take(l, seen, 3);
      const std::string mine = l.state().to_string();
      if (r > 0) {
        EXPECT_EQ(mine, state) << "every rank writes the same state";
      }
      state = mine;
    }
    EXPECT_NE(state.find("phases=2:12"), std::string::npos) << state;
    for (uint64_t r = 0; r < w1; ++r) {
      Loader l(src, copy, stream_options(w1, r));
      l.restore(SamplerState::parse(state));
      take(l, seen);
      EXPECT_EQ(l.epoch(), 6u) << "the restored epoch ran to its end";
    }
    const auto c = counts(seen);
    SCOPED_TRACE("resumed on " + std::to_string(w1) + " ranks");
    EXPECT_EQ(c.size(), 50u);
    EXPECT_LE(seen.size() - 50, w1 - 1);
  }
}

TEST(FaultsStreamLoader, AShardThatBreaksWhileStreamedStopsTheEpochNamingIt) {
  Shards shards;
  const auto src = shards.source();
  auto copy = std::make_shared<CopyTransform>(SampleSpec{DType::U8, {kSampleBytes}});
  // A plain shard is overwritten with garbage of the same size after it was indexed.
  const std::string victim = shards.paths[2];
  const auto size = std::filesystem::file_size(victim);
  std::vector<char> garbage(size, 'G');
  test::write_bytes(victim, garbage.data(), garbage.size());
  Loader l(src, copy, stream_options(1, 0));
  std::vector<uint64_t> seen;
  const std::string e = test::error_of([&] { take(l, seen); });
  EXPECT_NE(e.find(victim + "@"), std::string::npos) << e;
  EXPECT_NE(e.find("bad tar header checksum"), std::string::npos) << e;
}

TEST(FaultsStreamLoader, ResumingAStreamedStateOnARandomAccessLoaderIsRefused) {
  Shards shards;
  auto copy = std::make_shared<CopyTransform>(SampleSpec{DType::U8, {kSampleBytes}});
  std::vector<std::string> plain;
  for (size_t s = 0; s < shards.paths.size(); s += 2) plain.push_back(shards.paths[s]);
  Loader streamed(std::make_shared<TarShardSource>(plain, TarShardOptions{.stream = true}), copy,
                  stream_options(1, 0));
  ASSERT_TRUE(streamed.next());  // payloads name the indices of the whole set: not checked
  ASSERT_TRUE(streamed.next());
  const SamplerState st = streamed.state();
  Loader by_index(std::make_shared<TarShardSource>(plain), copy, stream_options(1, 0));
  const std::string e = test::error_of([&] { by_index.restore(st); });
  EXPECT_NE(e.find("was written by a loader that streams its shards"), std::string::npos) << e;
}

}  // namespace
