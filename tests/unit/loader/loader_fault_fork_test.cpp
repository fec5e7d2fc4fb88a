// fork() while a loader runs (DataLoader-style libraries, multiprocessing): the child's copy
// has no worker threads. Using it is a stoker::Error ("created in another process"); a child
// that only drops it, or its batches, and exits does not hang; a new loader in the child
// works; the parent's loader is unaffected.
#include "child_process.hpp"
#include "loader_fixture.hpp"
#include "stoker/loader/metrics.hpp"

using namespace stoker;

#if defined(__SANITIZE_THREAD__)
// The child of these forks starts threads of its own (a new loader), which TSan refuses
// after a fork of a process with threads unless told otherwise.
extern "C" const char* __tsan_default_options() {
  return "die_after_fork=0";
}
#endif

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

uint64_t full_epoch(Loader& loader) {
  uint64_t n = 0;
  for (Batch& b : loader) n += b.size() > 0;
  return n;
}

}  // namespace

TEST(FaultsFork, TheChildsLoaderRefusesToBeUsedAndItsExitDoesNotHang) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "TSan's runtime cannot start threads in a forked child of a threaded process "
                  "(dup thread with used id); the main build runs it";
#endif
  test::TokenSetup t;
  auto loader = std::make_unique<Loader>(t.source, t.copy, test::test_options(4, 2));
  std::optional<Batch> held = loader->next();  // the workers are busy filling the ring
  ASSERT_TRUE(held);
  const test::ChildResult r = test::run_in_child(
      [&](FILE* out) {
        for (const auto& use : std::vector<std::function<void()>>{
                 [&] { loader->next(); }, [&] { loader->start_epoch(); }, [&] { loader->state(); },
                 [&] { loader->set_epoch(3); }}) {
          try {
            use();
            std::fprintf(out, "FAIL used without an error\n");
            return 1;
          } catch (const Error& e) {
            std::fprintf(out, "%s\n", e.what());
          }
        }
        held.reset();    // a batch of the parent's loader, given back in the child
        loader.reset();  // the destructor must not wait for the parent's workers
        Loader fresh(t.source, t.copy, test::test_options(4, 2));
        return full_epoch(fresh) == fresh.batches_per_epoch() ? 0 : 2;
      },
      std::chrono::seconds(60));
  EXPECT_FALSE(r.hung) << r.describe();
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "stoker::Loader: was created in another process (pid " +
                                  std::to_string(::getpid()) + "); this is a forked child"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "make a new one in the child")) << r.out;
  // The parent's loader goes on as if nothing happened.
  held.reset();
  uint64_t rest = 0;
  while (std::optional<Batch> b = loader->next()) rest += b->size() > 0;
  EXPECT_EQ(rest + 1, loader->batches_per_epoch());
}

TEST(FaultsFork, AChildThatOnlyExitsDoesNotHang) {
  test::TokenSetup t;
  test::TempDir dir;
  auto loader = std::make_unique<Loader>(t.source, t.copy, test::test_options(4, 2));
  auto writer = std::make_unique<MetricsWriter>(
      dir.file("m.prom"), MetricLabels{}, [] { return LoaderStats{}; },
      std::chrono::milliseconds(20));
  ASSERT_TRUE(loader->next());
  for (int i = 0; i < 20; ++i) {  // forks at different moments of the workers' cycle
    const test::ChildResult r = test::run_in_child(
        [&](FILE*) {
          writer.reset();
          loader.reset();
          return 0;
        },
        std::chrono::seconds(30));
    ASSERT_FALSE(r.hung) << "fork " << i << ": " << r.describe();
    ASSERT_EQ(r.status, 0) << r.describe();
  }
}
