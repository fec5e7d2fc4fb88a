// Repeated augmentation in the loader (LoaderOptions::ra_reps): each copy of a sample reaches
// the transform with its own key (the repetition the sampler gives its position), so the
// copies can be augmented apart; a resumed epoch hands the same copies the same keys.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "loader_fixture.hpp"

using stoker::Batch;
using stoker::Loader;
using stoker::test::TokenSetup;

namespace {

// The copy of a token window whose first token is replaced by the key's repetition.
class RepetitionStamp : public stoker::CopyTransform {
 public:
  using CopyTransform::CopyTransform;
  void apply(const stoker::RawSample& in, const stoker::SampleKey& key, std::byte* out,
             stoker::Scratch& scratch, stoker::StageTimes& times) const override {
    CopyTransform::apply(in, key, out, scratch, times);
    const auto stamp = static_cast<uint16_t>(key.repetition);
    std::memcpy(out, &stamp, sizeof stamp);
  }
};

constexpr uint64_t kSeqLen = 64;

// (index, repetition) of every sample of a batch.
void collect(const Batch& b, std::vector<std::pair<uint64_t, uint64_t>>& out) {
  const auto tokens = b.as<uint16_t>();
  for (size_t k = 0; k < b.size(); ++k) {
    out.emplace_back(b.indices()[k], tokens[k * (kSeqLen + 1)]);
  }
}

stoker::LoaderOptions options() {
  auto o = stoker::test::test_options(16, 2, 4);
  o.ra_reps = 4;
  return o;
}

}  // namespace

TEST(LoaderRaReps, EachCopyReachesTheTransformWithItsRepetition) {
  TokenSetup t(1000, kSeqLen);
  auto stamp = std::make_shared<RepetitionStamp>(t.source->spec());
  Loader loader(t.source, stamp, options());
  loader.set_epoch(3);
  std::vector<std::pair<uint64_t, uint64_t>> got;
  for (Batch& b : loader) collect(b, got);
  ASSERT_EQ(got.size(), 768u);  // RASampler's floor(1000 // 256 * 256 / 1)
  for (size_t p = 0; p < got.size(); ++p) {
    EXPECT_EQ(got[p].first, got[p / 4 * 4].first) << p;  // the copies come in a row
    EXPECT_EQ(got[p].second, p % 4) << p;
  }

  // Resumed after 5 batches: the rest of the epoch, with the same keys.
  Loader first(t.source, stamp, options());
  first.set_epoch(3);
  std::vector<std::pair<uint64_t, uint64_t>> resumed;
  for (int i = 0; i < 5; ++i) collect(*first.next(), resumed);
  const stoker::SamplerState state = first.state();
  Loader second(t.source, stamp, options());
  second.restore(state);
  for (Batch& b : second) collect(b, resumed);
  EXPECT_EQ(resumed, got);
}
