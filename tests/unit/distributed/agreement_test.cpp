// The MPI-free half of the epoch agreement: the views, their one check (the messages both
// MPI and torch.distributed print), and the wait settings.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "error_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"

using stoker::EpochView;
using stoker::SeedRule;

namespace {

// `n` ranks that agree on everything: a sampler over 1001 samples at epoch 2.
std::vector<EpochView> agreeing(uint64_t n) {
  stoker::SamplerOptions o;
  o.size = 1001;
  o.seed = 7;
  o.fingerprint = 0xfeed;
  o.world_size = n;
  std::vector<EpochView> views;
  for (uint64_t r = 0; r < n; ++r) {
    o.rank = r;
    views.push_back(stoker::epoch_view(o, 2, r));
  }
  return views;
}

std::string verdict(const std::vector<EpochView>& views, SeedRule seeds) {
  return stoker::test::error_text([&] { stoker::check_epoch_views(views, seeds); });
}

class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() { ::unsetenv(name_); }

 private:
  const char* name_;
};

}  // namespace

TEST(Agreement, ViewsThatAgreePass) {
  EXPECT_EQ(verdict(agreeing(4), SeedRule::must_match), "(no error)");
}

TEST(Agreement, ViewsSurviveTheirWordForm) {
  const EpochView v = agreeing(3)[2];
  const auto words = stoker::to_words(v);
  const EpochView back = stoker::view_from_words(words);
  EXPECT_EQ(stoker::to_words(back), words);
  EXPECT_EQ(back.comm_rank, 2u);
  EXPECT_EQ(back.epoch, 2u);
  EXPECT_THROW(stoker::view_from_words(std::vector<uint64_t>{1, 2}), stoker::Error);
}

TEST(Agreement, DisagreementsNameTheRanksAndTheField) {
  auto views = agreeing(4);
  views[3].size = 1000;
  EXPECT_EQ(verdict(views, SeedRule::take_rank0),
            "agree_on_epoch: ranks disagree on the dataset: ranks 0-2 have dataset size 1001 "
            "(fingerprint 0x000000000000feed), rank 3 has dataset size 1000 (fingerprint "
            "0x000000000000feed) (give every rank the same dataset (same files, same sizes))");
  // Without a fingerprint (a Python dataset of plain objects) the message says so, not 0x0.
  views = agreeing(2);
  for (auto& v : views) v.fingerprint = 0;
  views[1].size = 1000;
  EXPECT_EQ(verdict(views, SeedRule::take_rank0),
            "agree_on_epoch: ranks disagree on the dataset: rank 0 has dataset size 1001 "
            "(contents not checked), rank 1 has dataset size 1000 (contents not checked) (give "
            "every rank the same dataset (same files, same sizes))");
  views = agreeing(4);
  views[1].epoch = 3;
  views[2].epoch = 3;
  EXPECT_EQ(verdict(views, SeedRule::must_match),
            "agree_on_epoch: ranks disagree on the epoch: ranks 0,3 have epoch 2, ranks 1-2 "
            "have epoch 3 (call set_epoch with the same epoch on every rank)");
  views = agreeing(2);
  views[1].drop_last = 1;
  EXPECT_EQ(verdict(views, SeedRule::must_match),
            "agree_on_epoch: ranks disagree on the sampler options: rank 0 has shuffle on, "
            "drop_last off, block 0, rank 1 has shuffle on, drop_last on, block 0 (give every "
            "rank the same sampler options)");
  views = agreeing(2);
  views[0].ra_reps = 4;  // one rank given the recipe's --ra-reps, the other not
  EXPECT_EQ(verdict(views, SeedRule::must_match),
            "agree_on_epoch: ranks disagree on the sampler options: rank 0 has shuffle on, "
            "drop_last off, block 0, ra_reps 4, rank 1 has shuffle on, drop_last off, block 0 "
            "(give every rank the same sampler options)");
}

TEST(Agreement, SeedsMustMatchOnlyWhereRankZerosIsNotTaken) {
  auto views = agreeing(3);
  views[1].seed = 8;
  EXPECT_EQ(verdict(views, SeedRule::take_rank0), "(no error)");
  EXPECT_EQ(verdict(views, SeedRule::must_match),
            "agree_on_epoch: ranks disagree on the seed: ranks 0,2 have seed 7, rank 1 has "
            "seed 8 (give every rank the same seed: with a rank-dependent one the shards "
            "overlap)");
}

TEST(Agreement, ASamplerBuiltForAnotherPlaceIsNamed) {
  auto views = agreeing(2);
  views[1].rank = 0;
  EXPECT_EQ(verdict(views, SeedRule::must_match),
            "agree_on_epoch: rank 1 of 2 built its sampler as rank 0 of world size 2 (build "
            "the sampler from the detected rank and world size (or leave them unset))");
}

TEST(Agreement, RankLists) {
  EXPECT_EQ(stoker::rank_list({0}), "rank 0");
  EXPECT_EQ(stoker::rank_list({0, 2, 3, 4}), "ranks 0,2-4");
}

TEST(Agreement, WaitsHalfAnHourByDefaultLikeNccl) {
  const EnvVar warn("STOKER_AGREE_WARN", nullptr), timeout("STOKER_AGREE_TIMEOUT", nullptr);
  const stoker::AgreeWait w = stoker::agree_wait_from_environment();
  EXPECT_EQ(w.warn.count(), 60);
  EXPECT_EQ(w.timeout.count(), 1800);  // the old default, 60 s, killed jobs whose rank 0 saved
}

TEST(Agreement, WaitSettingsFromTheEnvironment) {
  {
    const EnvVar warn("STOKER_AGREE_WARN", "1"), timeout("STOKER_AGREE_TIMEOUT", "0");
    const stoker::AgreeWait w = stoker::agree_wait_from_environment();
    EXPECT_EQ(w.warn.count(), 1);
    EXPECT_EQ(w.timeout.count(), 0);  // wait forever
  }
  const EnvVar warn("STOKER_AGREE_WARN", "0");
  EXPECT_THROW(stoker::agree_wait_from_environment(), stoker::Error);
}

TEST(FaultsAgreement, AMalformedWaitSettingNamesTheVariable) {
  const EnvVar timeout("STOKER_AGREE_TIMEOUT", "30m");
  EXPECT_EQ(stoker::test::error_text([] { stoker::agree_wait_from_environment(); }),
            "STOKER_AGREE_TIMEOUT: garbled value '30m' (expected a whole number from 0 to "
            "604800; fix or unset STOKER_AGREE_TIMEOUT)");
}

TEST(Agreement, TheWaitingLineNamesTheLateRank) {
  stoker::AgreeWait w;
  w.warn = std::chrono::seconds(1);
  const std::string line = stoker::agree_waiting_line(1, 4, "rank 0", std::chrono::seconds(3), w);
  EXPECT_EQ(line,
            "stoker: rank 1: agree_on_epoch: waited 3 s at the start of epoch 4 for rank 0 (busy "
            "checkpointing or validating, or hung?); giving up after 1800 s "
            "(STOKER_AGREE_TIMEOUT), a note every 1 s (STOKER_AGREE_WARN)");
  EXPECT_EQ(stoker::agree_timeout_text(4, "rank 3", w),
            "not every rank arrived within 1800 s at the start of epoch 4 (missing: rank 3): a "
            "rank hung, crashed or skipped the epoch's start; STOKER_AGREE_TIMEOUT sets the "
            "limit (0: wait forever)");
}

TEST(Agreement, OneRankOrNoAgreementEntersNoCollective) {
  EXPECT_EQ(stoker::agreement_mode(0, 1, true), "single rank");
  EXPECT_EQ(stoker::agreement_mode(0, 4, false), "off");
  stoker::SamplerOptions o;
  o.size = 10;
  o.seed = 31;
  o.world_size = 1;  // under any launcher: returns at once, its own seed
  EXPECT_EQ(stoker::agree_on_epoch(o, 0), 31u);
}
