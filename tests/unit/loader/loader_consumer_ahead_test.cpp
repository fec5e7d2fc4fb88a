// A consumer that takes batches ahead of its training loop (Python's to_device copies take
// one): Loader::state(held_back) resumes from what the loop got; and a caller that pins the
// arena whatever the plan says (LoaderOptions::force_pin).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "loader_fixture.hpp"

using namespace stoker;
using stoker::test::TokenSetup;

namespace {

// Records what the loader asks to page-lock and undo.
class RecordingPinner : public HostPinner {
 public:
  bool pin(void* base, size_t bytes, std::string*) override {
    pins.emplace_back(base, bytes);
    return true;
  }
  void unpin(void* base, size_t) noexcept override { unpins.push_back(base); }
  std::string describe() const override { return "recording pinner"; }
  std::vector<std::pair<void*, size_t>> pins;
  std::vector<void*> unpins;
};

}  // namespace

TEST(Loader, StateHeldBackCountsTheBatchesTakenAheadAsNotTaken) {
  TokenSetup t(100);  // 100 windows, batches of 16: 7 batches
  Loader loader(t.source, t.copy, test::test_options(16, 2, 4));
  std::vector<Batch> held;
  for (int i = 0; i < 3; ++i) held.push_back(*loader.next());
  EXPECT_EQ(loader.state().consumed, 48u);
  EXPECT_EQ(loader.state(1).consumed, 32u);
  EXPECT_EQ(loader.state(5).consumed, 0u);  // never before the loop's start
  held.clear();
  for (int i = 3; i < 7; ++i) (void)loader.next();  // the last batch taken, one held back
  EXPECT_EQ(loader.state(1).epoch, 0u);
  EXPECT_EQ(loader.state(1).consumed, 96u);
  EXPECT_EQ(loader.state().epoch, 1u);  // the epoch is done for a consumer holding nothing
  EXPECT_EQ(loader.state().consumed, 0u);
}

TEST(Loader, ForcePinPinsThroughThePinnerWhateverThePlanSays) {
  TokenSetup t(100);
  for (bool force : {false, true}) {
    auto pinner = std::make_shared<RecordingPinner>();
    {
      LoaderOptions o = test::test_options(16, 1);
      o.plan->pin_memory = false;
      o.pinner = pinner;
      o.force_pin = force;
      Loader loader(t.source, t.copy, o);
      ASSERT_TRUE(loader.next().has_value());
    }
    EXPECT_EQ(pinner->pins.size(), force ? 1u : 0u);
    ASSERT_EQ(pinner->unpins.size(), pinner->pins.size());
    if (force) {
      EXPECT_EQ(pinner->unpins[0], pinner->pins[0].first);
    }
  }
}
