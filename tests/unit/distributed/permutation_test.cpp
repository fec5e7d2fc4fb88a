#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

using stoker::Permutation;

namespace {
// True when p maps [0, n) onto itself one to one, and inverse() undoes it.
::testing::AssertionResult is_bijection(const Permutation& p) {
  const uint64_t n = p.size();
  std::vector<bool> seen(n, false);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t v = p(i);
    if (v >= n) return ::testing::AssertionFailure() << "p(" << i << ") = " << v << " >= " << n;
    if (seen[v]) return ::testing::AssertionFailure() << "index " << v << " hit twice, size " << n;
    seen[v] = true;
    if (p.inverse(v) != i) return ::testing::AssertionFailure() << "inverse fails at " << i;
  }
  return ::testing::AssertionSuccess();
}
}  // namespace

TEST(Permutation, IsABijectionForManySizes) {
  std::vector<uint64_t> sizes = {1, 2, 3, 4, 5, 7, 11, 13, 97, 101, 1009, 7919, 65521, 1000003};
  for (int k = 1; k <= 20; ++k) {
    const uint64_t p = uint64_t{1} << k;
    sizes.insert(sizes.end(), {p - 1, p, p + 1});
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5; ++i) sizes.push_back(1 + rng() % 300000);
  for (uint64_t n : sizes) {
    EXPECT_TRUE(is_bijection(Permutation(n, 42, 3))) << "size " << n;
  }
}

TEST(Permutation, NoShuffleIsTheIdentity) {
  Permutation p(1000, 5, 6, /*shuffle=*/false);
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(p(i), i);
}

TEST(Permutation, DependsOnSeedAndEpochOnly) {
  const uint64_t n = 10000;
  auto order = [&](uint64_t seed, uint64_t epoch) {
    std::vector<uint64_t> v(n);
    Permutation p(n, seed, epoch);
    for (uint64_t i = 0; i < n; ++i) v[i] = p(i);
    return v;
  };
  const auto base = order(1, 0);
  EXPECT_EQ(base, order(1, 0));  // identical across runs
  EXPECT_NE(base, order(1, 1));  // epochs differ
  EXPECT_NE(base, order(2, 0));  // seeds differ
  EXPECT_NE(order(1, 1), order(1, 2));
  // Not the identity, and not a rotation: few fixed points (about 1 expected).
  int fixed = 0;
  for (uint64_t i = 0; i < n; ++i) fixed += base[i] == i;
  EXPECT_LT(fixed, 10);
}

TEST(Permutation, StableValues) {
  // The order is part of the resume contract: a state written by one build must continue
  // the same order in the next. If these values change, resumes across versions break:
  // bump SamplerState::kFormatVersion.
  Permutation p(1000, 0, 0);
  EXPECT_EQ((std::vector<uint64_t>{p(0), p(1), p(2), p(3), p(4), p(5)}),
            (std::vector<uint64_t>{580, 140, 286, 596, 829, 392}));
  Permutation q(1000000000, 7, 3);
  EXPECT_EQ((std::vector<uint64_t>{q(0), q(1), q(2), q(3)}),
            (std::vector<uint64_t>{136143863, 103738497, 992293139, 577933338}));
  EXPECT_EQ(stoker::permute_index(2, 1000, 0, 0), 286u);
}

TEST(Permutation, LooksUniform) {
  // Where position 0 lands over many epochs: roughly uniform over 16 buckets.
  const uint64_t n = 1600;
  std::vector<int> buckets(16, 0);
  for (uint64_t e = 0; e < 16000; ++e) buckets[Permutation(n, 9, e)(0) / 100]++;
  for (int b : buckets) {
    EXPECT_GT(b, 800);
    EXPECT_LT(b, 1200);
  }
}

TEST(Permutation, HugeSizes) {
  for (uint64_t n : {uint64_t{1} << 40, (uint64_t{1} << 62) + 3, ~uint64_t{0}}) {
    Permutation p(n, 1, 2);
    for (uint64_t i : {uint64_t{0}, uint64_t{1}, n / 2, n - 1}) {
      const uint64_t v = p(i);
      EXPECT_LT(v, n);
      EXPECT_EQ(p.inverse(v), i);
    }
  }
}

TEST(Permutation, PermuteIndexRejectsPositionsOutsideTheDataset) {
  try {
    stoker::permute_index(10, 10, 0, 0);
    FAIL() << "no error";
  } catch (const stoker::Error& e) {
    EXPECT_STREQ(e.what(),
                 "permute_index: position 10 is outside the dataset of 10 samples (positions run "
                 "from 0 to size - 1)");
  }
}
