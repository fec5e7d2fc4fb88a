// The loader's batch mixing (LoaderCore::mix, LoaderOptions::mix): each delivered batch is the
// samples present, mixed among themselves (skipped ones left out, a short last batch within
// itself, a batch of one with itself) with the draw of the batch's key, and its targets are
// float32 rows of the classes; stated here element by element from the unmixed samples.
#include <gtest/gtest.h>

#include <set>

#include "loader_fixture.hpp"
#include "stoker/transforms/batch_mix.hpp"

using namespace stoker;

namespace {

constexpr int kSide = 4;
constexpr size_t kElems = 3 * kSide * kSide;
constexpr uint64_t kClasses = 5;

// Sample i's element e before mixing.
float value(uint64_t i, size_t e) {
  return static_cast<float>(i) * 1.5f + static_cast<float>(e) * 0.01f;
}

// Samples 0..n-1, label i % kClasses; those in `corrupt` fail as a bad file would.
class Numbered final : public Source {
 public:
  Numbered(uint64_t n, std::set<uint64_t> corrupt) : n_(n), corrupt_(std::move(corrupt)) {}
  uint64_t size() const override { return n_; }
  RawSample read(uint64_t i, std::vector<std::byte>&) const override {
    if (corrupt_.count(i)) throw SampleError{i, location(i), "planted"};
    return {{}, static_cast<int64_t>(i % kClasses)};
  }
  std::string location(uint64_t i) const override { return "sample " + std::to_string(i); }
  uint64_t fingerprint() const override { return n_; }
  std::string describe() const override { return "numbered samples"; }

 private:
  uint64_t n_;
  std::set<uint64_t> corrupt_;
};

// Writes value(index, e): a float32 CHW image of kSide.
class Image final : public Transform {
 public:
  SampleSpec output_spec() const override { return {DType::F32, {3, kSide, kSide}}; }
  void apply(const RawSample&, const SampleKey& key, std::byte* out, Scratch&,
             StageTimes&) const override {
    auto* f = reinterpret_cast<float*>(out);
    for (size_t e = 0; e < kElems; ++e) f[e] = value(key.index, e);
  }
  std::string describe() const override { return "numbered image"; }
};

ImageTransformOptions mix_options(double mixup, double cutmix) {
  ImageTransformOptions o;
  o.size = kSide;
  o.mixup_alpha = mixup;
  o.cutmix_alpha = cutmix;
  return o;
}

// One epoch of a loader of `n` samples in batches of `batch`, checked batch by batch.
void check_epoch(uint64_t n, size_t batch, const std::set<uint64_t>& corrupt, double mixup,
                 double cutmix) {
  LoaderOptions o = test::test_options(batch, 2);
  o.on_corrupt = CorruptPolicy::Skip;
  o.max_skip_fraction = 1.0;
  o.mix = std::make_shared<BatchMix>(mix_options(mixup, cutmix), kClasses);
  Loader loader(std::make_shared<Numbered>(n, corrupt), std::make_shared<Image>(), o);
  uint64_t number = 0, delivered = 0;
  std::set<int> kinds;
  for (Batch& b : loader) {
    // The key: the batch's first sample's place in the epoch's order (one rank, from 0).
    const MixDraw d = o.mix->draw({o.seed, 0, number * batch});
    kinds.insert(static_cast<int>(d.kind));
    ASSERT_EQ(b.labels(), nullptr);
    ASSERT_EQ(b.label_classes(), kClasses);
    const size_t m = b.size();
    const auto* x = reinterpret_cast<const float*>(b.data());
    const float a = static_cast<float>(d.lambda), w = static_cast<float>(1.0 - d.lambda);
    for (size_t i = 0; i < m; ++i) {
      const uint64_t mine = b.indices()[i], theirs = b.indices()[(i + m - 1) % m];
      ASSERT_FALSE(corrupt.count(mine));
      for (size_t e = 0; e < kElems; ++e) {
        const size_t y = e / kSide % kSide, c = e % kSide;
        const bool boxed = static_cast<int>(c) >= d.x1 && static_cast<int>(c) < d.x2 &&
                           static_cast<int>(y) >= d.y1 && static_cast<int>(y) < d.y2;
        const float mixed = value(mine, e) * a + value(theirs, e) * w;
        const float want = d.kind == MixDraw::Kind::MixUp ? mixed : value(boxed ? theirs : mine, e);
        ASSERT_EQ(x[i * kElems + e], want) << "batch " << number << " sample " << i;
      }
      for (uint64_t k = 0; k < kClasses; ++k) {
        const float one = (mine % kClasses == k ? 1.0f : 0.0f) * a;
        const float other = (theirs % kClasses == k ? 1.0f : 0.0f) * w;
        ASSERT_EQ(b.soft_labels()[i * kClasses + k], one + other) << "batch " << number;
      }
    }
    delivered += m;
    ++number;
  }
  EXPECT_EQ(delivered, n - corrupt.size());
  EXPECT_EQ(kinds.size(), mixup > 0 && cutmix > 0 ? 2u : 1u);
}

TEST(LoaderMix, SkippedSamplesAreLeftOutAndAShortLastBatchMixesWithinItself) {
  check_epoch(23, 5, {6, 7, 21}, 0.4, 0.0);  // 5 batches, the last of 3 less one skipped
  check_epoch(23, 5, {0, 12}, 0.0, 1.0);
  check_epoch(60, 3, {}, 0.2, 1.0);  // both: each batch one of them
}

TEST(LoaderMix, ABatchOfOneMixesWithItself) {
  check_epoch(4, 1, {}, 0.5, 0.0);
  check_epoch(4, 1, {}, 0.0, 0.5);
}

// The slot holds the rows, and a mix made for another sample is refused by name.
TEST(LoaderMix, ItsLabelAreaIsSizedForTheRows) {
  LoaderOptions o = test::test_options(8, 1);
  o.mix = std::make_shared<BatchMix>(mix_options(0.2, 0), 1000);
  Loader loader(std::make_shared<Numbered>(16, std::set<uint64_t>{}), std::make_shared<Image>(), o);
  EXPECT_GE(loader.stats().slot_bytes, 8 * (kElems * 4 + 1000 * 4));
  ImageTransformOptions other = mix_options(0.2, 0);
  other.size = kSide + 1;
  o.mix = std::make_shared<BatchMix>(other, kClasses);
  EXPECT_NE(test::error_of([&] {
              Loader(std::make_shared<Numbered>(16, std::set<uint64_t>{}),
                     std::make_shared<Image>(), o);
            }).find("LoaderOptions::mix"),
            std::string::npos);
}

}  // namespace
