// on_corrupt = Skip and max_skip_fraction on real record files whose corrupt records fail
// their checksum: a dataset with a few bad samples trains on, one that is mostly bad stops
// early with a clear error, and each bad file is named once.
#include <gtest/gtest.h>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"

using namespace stoker;
using stoker::test::error_of;
using stoker::test::TempDir;

namespace {

struct Records {
  TempDir dir;
  std::string path;
  std::shared_ptr<RecordFileSource> source;
  Records(uint64_t n, const std::set<uint64_t>& corrupt) {
    path = test::write_records(dir, n, 24, corrupt);
    source = std::make_shared<RecordFileSource>(path, 24);
  }
  std::unique_ptr<Loader> loader(double max_skip_fraction, size_t batch = 50) const {
    LoaderOptions o = test::test_options(batch, 2);
    o.on_corrupt = CorruptPolicy::Skip;
    o.max_skip_fraction = max_skip_fraction;
    return std::make_unique<Loader>(source, std::make_shared<test::ChecksumCopy>(source->spec()),
                                    o);
  }
};

// Iterates one epoch: the error it ends with ("(no error)"), and the batches delivered.
std::string epoch_error(Loader& loader, uint64_t& batches) {
  return error_of([&] {
    for (Batch& b : loader) {
      (void)b;
      ++batches;
    }
  });
}

std::set<uint64_t> every(uint64_t step, uint64_t n) {
  std::set<uint64_t> s;
  for (uint64_t i = 0; i < n; i += step) s.insert(i);
  return s;
}

TEST(FaultsLoader, AMostlyCorruptDatasetStopsEarlyEvenUnderSkip) {
  const Records r(20000, every(2, 20000));  // half the records: a half-copied dataset
  auto loader = r.loader(0.01);
  uint64_t batches = 0;
  const std::string what = epoch_error(*loader, batches);
  EXPECT_NE(what.find("corrupt samples: "), std::string::npos) << what;
  EXPECT_NE(what.find("of epoch 0 tried so far on this rank were corrupt and skipped"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("more than max_skip_fraction 0.01 allows"), std::string::npos) << what;
  // Stopped as soon as kSkipCheckAfter samples were tried (20 batches of 50), not at the end.
  EXPECT_EQ(batches, kSkipCheckAfter / 50 - 1);
  EXPECT_FALSE(loader->next().has_value());  // the failed loop is over
}

TEST(FaultsLoader, AFewCorruptSamplesAreSkippedNamedOnceAndCounted) {
  const Records r(5000, {17, 4242});  // 0.04 %
  auto loader = r.loader(0.01);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    uint64_t samples = 0;
    for (Batch& b : *loader) samples += b.size();
    EXPECT_EQ(samples, 4998u);
  }
  const LoaderStats st = loader->stats();
  EXPECT_EQ(st.skipped, 4u);               // twice in each of two epochs
  ASSERT_EQ(st.skipped_files.size(), 2u);  // named once each
  for (const std::string& f : st.skipped_files) EXPECT_EQ(f.rfind(r.path + "@", 0), 0u) << f;
}

TEST(FaultsLoader, AShortEpochIsJudgedAtItsEnd) {
  // 2 bad of 110 (1.8 %): an epoch shorter than kSkipCheckAfter is checked when it ends.
  const Records r(110, {5, 70});
  auto strict = r.loader(0.01, 10);
  uint64_t batches = 0;
  const std::string what = epoch_error(*strict, batches);
  EXPECT_NE(what.find("2 of the 110 samples of epoch 0"), std::string::npos) << what;
  EXPECT_EQ(batches, 10u);  // every batch but the last
  auto lenient = r.loader(0.05, 10);
  uint64_t samples = 0;
  for (Batch& b : *lenient) samples += b.size();
  EXPECT_EQ(samples, 108u);
  EXPECT_EQ(lenient->stats().skipped, 2u);
}

TEST(FaultsLoader, AMaxSkipFractionOutsideZeroToOneIsRefused) {
  const Records r(100, {});
  for (double bad : {-0.1, 1.5}) {
    EXPECT_NE(error_of([&] { (void)r.loader(bad); }).find("max_skip_fraction: must be in 0..1"),
              std::string::npos);
  }
  EXPECT_NO_THROW((void)r.loader(1.0));
}

}  // namespace
