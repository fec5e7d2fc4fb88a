// The prefetch contract at the loader, and its two ways in: Loader::for_this_process (plans,
// fits the plan to the batch, detects the world) and the constructor (takes the plan and
// the world as they are). The ring starts at prefetch, the controller moves it within
// [prefetch, prefetch_max], the arena holds prefetch_max + held slots within the budget,
// and nothing is re-capped on the way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/loader/worker_shares.hpp"

using namespace stoker;
using namespace std::chrono_literals;
using stoker::test::error_of;
using stoker::test::TokenSetup;

namespace {

constexpr uint64_t kSlot = 2240;  // 16 x 130 data bytes -> 2112 (64-aligned), + 128 of labels

// The allowed CPUs of this process's loader workers (threads named "stoker-w<i>"), as the
// kernel reports them.
std::multiset<std::string> worker_thread_cpus() {
  std::multiset<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind("stoker-w", 0) != 0) continue;
    std::ifstream status(e.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0)
        out.insert(line.substr(line.find_first_not_of(" \t", 18)));
    }
  }
  return out;
}

// A bursty producer: without shuffle, sample i is in batch i / 16, so a SlowCopy of every
// 64th sample makes batch k slow (20 ms) and batches k+1..k+3 fast. The consumer trains for
// 1 ms per batch, so the other workers fill the ring behind each slow batch (the controller
// sees that more depth would help), then it blocks on the slow one. Load on the machine can
// stretch these times but not reorder them: a slow batch always keeps its consumer waiting.
std::shared_ptr<test::SlowCopy> bursty_copy(const TokenSetup& t) {
  return std::make_shared<test::SlowCopy>(t.source->spec(), 16 * 4, 20ms);
}

LoaderOptions bursty_options(LoaderOptions o) {
  o.shuffle = false;
  return o;
}

// One epoch with a 1 ms training step per batch; returns the batches seen.
uint64_t train_on(Loader& loader) {
  uint64_t n = 0;
  for (Batch& b : loader) {
    (void)b;
    ++n;
    std::this_thread::sleep_for(1ms);
  }
  return n;
}

}  // namespace

TEST(FaultsLoader, ABurstyProducerCountsTheWaitAndGrowsTheDepth) {
  // Batch k is slow while k+1..k+3 are ready behind it: the consumer's wait for k counts
  // (it used to be recorded as 0 whenever a later batch was ready), so the controller grows.
  TokenSetup t(16 * 64);
  LoaderOptions o = bursty_options(test::test_options(16, 3, 2));
  Loader loader(t.source, bursty_copy(t), o);
  const uint64_t batches = train_on(loader);
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.batches, batches);
  EXPECT_GT(st.consumer_wait_ns, 0u) << st.summary();
  EXPECT_GT(st.wait_share, 0.0) << st.summary();
  ASSERT_GE(st.depth_history.size(), 2u) << st.summary();
  EXPECT_EQ(st.depth_history[1].reason, DepthReason::ConsumerWaited);
  EXPECT_EQ(st.depth_history[1].from, 2);
  EXPECT_EQ(st.depth_history[1].to, 3);
  EXPECT_GT(st.depth_history[1].wait_ns, 0u);
  EXPECT_GE(st.consumer_wait_ns, st.depth_history[1].wait_ns);
  int highest = 0;
  for (const DepthChange& c : st.depth_history) highest = std::max(highest, c.to);
  EXPECT_GT(highest, 3) << st.summary();
  EXPECT_LE(highest, 8) << st.summary();  // the plan's prefetch_max
}

TEST(Loader, DepthGrowsWhenTheConsumerWaitsAndStaysInTheBudget) {
  TokenSetup t(16 * 100);
  // The plan's room (8) does not fit 8 slots beside 2 held batches: the factory fits it to 6.
  LoaderOptions o = bursty_options(test::test_options(16, 3, 2, 8 * kSlot));
  auto loader = Loader::for_this_process(t.source, bursty_copy(t), o);
  EXPECT_EQ(loader->plan().prefetch_max, 6);
  EXPECT_EQ(
      loader->plan().reason("prefetch_max"),
      "lowered to 6: the budget holds 8 batch(es) of 2.2 KiB, 2 of them held by the consumer");
  train_on(*loader);
  LoaderStats st = loader->stats();
  EXPECT_EQ(st.slot_bytes, kSlot);
  EXPECT_EQ(st.slots, 8);
  EXPECT_EQ(st.max_depth, 6);
  EXPECT_LE(st.arena_bytes, 8 * kSlot + 4096);
  ASSERT_GE(st.depth_history.size(), 2u) << st.summary();
  int highest = 0;
  for (const DepthChange& c : st.depth_history) {
    highest = std::max(highest, c.to);
    EXPECT_LE(c.to, 6);
    EXPECT_GE(c.to, 2);  // never below the plan's prefetch
  }
  EXPECT_GT(highest, 2) << st.summary();
  EXPECT_EQ(st.depth_history[1].reason, DepthReason::ConsumerWaited);
}

TEST(Loader, FixedDepthWhenNotAdaptive) {
  TokenSetup t(1000);
  auto bursty = std::make_shared<test::SlowCopy>(t.source->spec(), 97, 2ms);
  LoaderOptions o = test::test_options(16, 2, 3);
  o.adaptive = false;
  Loader loader(t.source, bursty, o);
  for (Batch& b : loader) (void)b;
  EXPECT_EQ(loader.depth(), 3);
  EXPECT_EQ(loader.stats().depth_history.size(), 1u);
  EXPECT_EQ(loader.stats().slots, 3 + 2);  // no room to grow is reserved
}

TEST(Loader, TheConstructorTakesThePlansDepthsAsTheyAre) {
  TokenSetup t(500);
  LoaderOptions o = test::test_options(16, 2, 3);
  o.plan->prefetch_max = 5;
  Loader loader(t.source, t.copy, o);
  const LoaderStats st = loader.stats();
  EXPECT_EQ(loader.depth(), 3);
  EXPECT_EQ(st.max_depth, 5);
  EXPECT_EQ(st.slots, 5 + 2);
  EXPECT_EQ(loader.plan_source(), "given by the caller");

  // Explicit callers (a what-if, a test) may still choose the depths.
  o.prefetch = 4;
  o.max_depth = 9;
  Loader chosen(t.source, t.copy, o);
  EXPECT_EQ(chosen.depth(), 4);
  EXPECT_EQ(chosen.stats().max_depth, 9);
  o.max_depth = 0;  // a starting depth above the plan's prefetch_max raises the room to it
  o.prefetch = 7;
  EXPECT_EQ(Loader(t.source, t.copy, o).stats().max_depth, 7);
}

TEST(FaultsLoader, AFixedPlanDepthNeverMoves) {
  // --stoker-prefetch=3 gives prefetch = prefetch_max = 3: neither waits nor calm move it.
  TokenSetup t(2000);
  auto bursty = std::make_shared<test::SlowCopy>(t.source->spec(), 31, 2ms);
  LoaderOptions o = test::test_options(16, 2, 3);
  o.plan->prefetch_max = 3;
  Loader loader(t.source, bursty, o);
  for (uint64_t e = 0; e < 2; ++e) {
    loader.set_epoch(e);
    for (Batch& b : loader) (void)b;
  }
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.depth, 3);
  EXPECT_EQ(st.max_depth, 3);
  EXPECT_EQ(st.depth_history.size(), 1u) << st.summary();
}

TEST(FaultsLoader, ARingOverTheBudgetIsAnErrorNotSilentlyShallower) {
  TokenSetup t(500);
  // The plan says the ring may grow to 8 beside 2 held batches: 10 slots; the budget holds 6.
  LoaderOptions o = test::test_options(16, 1, 2, 6 * kSlot);
  EXPECT_EQ(
      error_of([&] { Loader(t.source, t.copy, o); }),
      "LoaderOptions::batch_size: a batch of 16 samples x 130 bytes (a slot of 2240 bytes) fits 6 "
      "time(s) in the plan's memory budget of 13440 bytes; the loader needs 10 slots (a "
      "ring of up to 8 batches + 2 held) (lower the batch size, the depth (prefetch_max, "
      "LoaderOptions::max_depth) or held_batches, or raise the budget (STOKER_MEM_BUDGET, "
      "the profile's MemShare))");
  // The factory fits the plan (prefetch_max 4), but an explicit deeper max_depth stays an
  // error: asked for, it is not quietly lowered.
  EXPECT_EQ(Loader::for_this_process(t.source, t.copy, o)->stats().max_depth, 4);
  o.max_depth = 5;
  EXPECT_NE(error_of([&] {
              Loader::for_this_process(t.source, t.copy, o);
            }).find("the loader needs 7 slots (a ring of up to 5 batches + 2 held)"),
            std::string::npos);
  // Not even one batch beside the held ones: the same error, from the factory too.
  o = test::test_options(16, 1, 2, 2 * kSlot);
  EXPECT_NE(error_of([&] {
              Loader::for_this_process(t.source, t.copy, o);
            }).find("fits 2 time(s) in the plan's memory budget of 4480 bytes"),
            std::string::npos);
}

TEST(Loader, ConstructionErrorsNameTheInput) {
  TokenSetup t(100);
  // The constructor's error for `o`.
  const auto built = [&t](const LoaderOptions& o) {
    return error_of([&] { Loader(t.source, t.copy, o); });
  };
  LoaderOptions o = test::test_options(0, 1);
  EXPECT_EQ(built(o), "LoaderOptions::batch_size: batch size 0 (use a batch size >= 1)");

  o = test::test_options(16, 1);
  o.plan.reset();
  EXPECT_EQ(built(o),
            "LoaderOptions::plan: is not set (give the rank's plan, or build the loader with "
            "Loader::for_this_process)");
  o = test::test_options(16, 1);
  o.world_size = 0;
  EXPECT_EQ(built(o).rfind("LoaderOptions::world_size: is 0", 0), 0u);

  o = test::test_options(16, 1);
  o.prefetch = 5000;
  EXPECT_EQ(built(o),
            "LoaderOptions::prefetch: is 5000, outside 1..4096 (give a depth in batches within "
            "that range)");
  o = test::test_options(16, 1, 4);
  o.max_depth = 3;
  EXPECT_EQ(built(o).rfind("LoaderOptions::max_depth: is 3, outside 4..4096", 0), 0u);
  o = test::test_options(16, 1);
  o.held_batches = 0;
  EXPECT_EQ(built(o).rfind("LoaderOptions::held_batches: is 0, outside 1..4096", 0), 0u);
  o = test::test_options(16, 1);
  o.workers = 2000;
  EXPECT_EQ(built(o), "LoaderOptions::workers: is 2000, outside 1..1024");

  o = test::test_options(16, 1);
  o.plan->worker_cpus = CpuSet::from_list({4000, 4001});
  std::string cpus = built(o);
  EXPECT_EQ(cpus.rfind("plan worker CPUs: CPUs 4000-4001 of the workers' CPUs 4000-4001 are not "
                       "available to this process",
                       0),
            0u)
      << cpus;

  o = test::test_options(128, 1);
  o.drop_last = true;
  EXPECT_NE(built(o).find("gives this rank 100 of 100 samples, fewer than one batch of 128"),
            std::string::npos);

  auto wrong = std::make_shared<CopyTransform>(SampleSpec{DType::U8, {0}});
  EXPECT_NE(error_of([&] { Loader(t.source, wrong, test::test_options(16, 1)); }).find("0 bytes"),
            std::string::npos);
}

TEST(Loader, ForThisProcessPlansForTheBatchWhenNoPlanIsGiven) {
  TokenSetup t(100);
  LoaderOptions o = test::test_options(16, 1);
  o.plan.reset();
  auto loader = Loader::for_this_process(t.source, t.copy, o);
  const Plan& plan = loader->plan();
  EXPECT_GE(plan.workers, 1);
  EXPECT_EQ(loader->stats().workers, plan.workers);
  EXPECT_EQ(plan.batch_bytes, kSlot);  // planned for the real slot, not the profile's guess
  EXPECT_LE(plan.prefetch, plan.prefetch_max);
  EXPECT_LE((plan.prefetch_max + 2) * kSlot, plan.mem_budget);
  EXPECT_EQ(loader->stats().max_depth, plan.prefetch_max);
  uint64_t samples = 0;
  for (Batch& b : *loader) samples += b.size();
  EXPECT_EQ(samples, 100u);
  EXPECT_EQ(loader->plan_source().rfind("computed on ", 0), 0u) << loader->plan_source();
  EXPECT_EQ(loader->stats().notes.front(), "plan from " + loader->plan_source());
}

TEST(Loader, ForThisProcessDetectsTheWorld) {
  TokenSetup t(100);
  LoaderOptions o = test::test_options(16, 1);
  o.world_size = 0;  // this test process: a single rank (no MPI launcher, no RANK)
  auto loader = Loader::for_this_process(t.source, t.copy, o);
  EXPECT_EQ(loader->sampler().options().world_size, detect_world().world_size);
  EXPECT_EQ(loader->sampler().options().rank, detect_world().rank);
}

TEST(Loader, WorkersBeyondThePlansWorkerCpusSpreadAndSaySo) {
  const CpuSet mask = current_cpu_mask();
  if (mask.count() < 2) GTEST_SKIP() << "needs 2 CPUs, this process has " << mask.to_string();
  TokenSetup t(500);
  LoaderOptions o = test::test_options(16, 1);
  const std::vector<int> cpus = mask.list();
  o.plan->worker_cpus = CpuSet::from_list({cpus.back()});
  o.plan->main_cpus = CpuSet::from_list({cpus.front()});
  o.workers = 2;
  Loader loader(t.source, t.copy, o);
  // Read back from the kernel: where the workers run.
  EXPECT_EQ(worker_thread_cpus(), (std::multiset<std::string>{std::to_string(cpus.front()),
                                                              std::to_string(cpus.back())}));
  const std::vector<CpuSet> shares = worker_shares(loader.plan(), 2);
  EXPECT_EQ(shares[0], CpuSet::from_list({cpus.back()}));
  EXPECT_EQ(shares[1], CpuSet::from_list({cpus.front()}));
  bool noted = false;
  for (const std::string& n : loader.stats().notes)
    noted = noted || n.find("2 workers > 1 worker CPU(s)") != std::string::npos;
  EXPECT_TRUE(noted);
  uint64_t samples = 0;
  for (Batch& b : loader) samples += b.size();
  EXPECT_EQ(samples, 500u);
}

TEST(Loader, ForThisProcessPinsTheTrainingLoopToTheMainCpus) {
  TokenSetup t(100);
  LoaderOptions o = test::test_options(16, 1);
  o.plan.reset();  // planned here, as a job's would be
  struct Seen {
    CpuSet loop;
    std::multiset<std::string> workers;
    Plan plan;
    std::vector<std::string> notes;
  };
  // The thread that builds the loader stands for the training loop (and keeps this test
  // process's own thread as it was).
  const auto build_on_a_thread = [&](bool pin) {
    Seen s;
    o.pin_main_thread = pin;
    std::thread loop([&] {
      auto loader = Loader::for_this_process(t.source, t.copy, o);
      s.loop = current_cpu_mask();
      s.workers = worker_thread_cpus();
      s.plan = loader->plan();
      s.notes = loader->stats().notes;
    });
    loop.join();
    return s;
  };
  const Seen s = build_on_a_thread(true);
  EXPECT_EQ(s.loop, s.plan.main_cpus) << "read back from the kernel";
  const std::string note =
      "main thread pinned to CPUs " + s.plan.main_cpus.to_string() + " (main_cpus)";
  EXPECT_EQ(s.plan.reason("main_thread"), note);
  ASSERT_GE(s.notes.size(), 2u);
  EXPECT_EQ(s.notes[1], note);
  std::multiset<std::string> shares;
  for (const CpuSet& share : worker_shares(s.plan, s.plan.workers))
    shares.insert(share.to_string());
  EXPECT_EQ(s.workers, shares) << "the workers run on the plan's worker CPUs";

  const Seen unpinned = build_on_a_thread(false);
  EXPECT_EQ(unpinned.loop, current_cpu_mask());
  EXPECT_EQ(unpinned.plan.reason("main_thread"), "");
}
