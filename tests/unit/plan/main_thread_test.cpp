// Applying a plan to the training loop's thread: pinned to the plan's main CPUs, read back
// from the kernel; a mask the thread cannot take is a note, never an error. Each case runs
// on its own thread, which stands for a training loop's.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "stoker/plan/main_thread.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker {
namespace {

struct Seen {
  MainThreadPin pin;
  CpuSet before, after, task;
};

Seen pin_on_a_thread(Plan& plan) {
  Seen s;
  std::thread t([&] {
    s.before = current_cpu_mask();
    s.pin = pin_main_thread(plan);
    s.after = current_cpu_mask();
    s.task = task_cpu_mask();
  });
  t.join();
  return s;
}

Plan plan_with_main(const CpuSet& main) {
  Plan p;
  p.cpus = current_cpu_mask();
  p.main_cpus = main;
  p.worker_cpus = p.cpus - main;
  return p;
}

TEST(MainThread, PinsTheCallingThreadToTheMainCpus) {
  const CpuSet mask = current_cpu_mask();
  const CpuSet main = CpuSet::from_list({mask.first()});
  Plan plan = plan_with_main(main);
  const Seen s = pin_on_a_thread(plan);
  ASSERT_TRUE(s.pin.pinned) << s.pin.note;
  EXPECT_EQ(s.after, main);
  EXPECT_EQ(s.pin.cpus, main);
  EXPECT_EQ(s.pin.note, "main thread pinned to CPUs " + main.to_string() + " (main_cpus)");
  EXPECT_EQ(plan.reason("main_thread"), s.pin.note);
  EXPECT_TRUE(s.before.is_subset_of(s.task)) << "a later plan still sees the whole task";
  EXPECT_EQ(current_cpu_mask(), mask) << "other threads keep their masks";
  EXPECT_EQ(main_threads(plan), 1);
}

TEST(MainThread, KeepsANarrowerOutsideBinding) {
  const CpuSet mask = current_cpu_mask();
  if (mask.count() < 2) GTEST_SKIP() << "needs 2 CPUs, this process has " << mask.to_string();
  Plan plan = plan_with_main(mask);  // main CPUs: all of them
  Seen s;
  std::thread t([&] {
    const CpuSet one = CpuSet::from_list({mask.list()[1]});
    ASSERT_TRUE(bind_this_thread(one, nullptr));  // as `taskset -c` would have done
    s.pin = pin_main_thread(plan);
    s.after = current_cpu_mask();
  });
  t.join();
  ASSERT_TRUE(s.pin.pinned) << s.pin.note;
  EXPECT_EQ(s.after, CpuSet::from_list({mask.list()[1]}));
  EXPECT_NE(s.pin.note.find(", the part of the plan's main CPUs " + mask.to_string()),
            std::string::npos)
      << s.pin.note;
  EXPECT_EQ(main_threads(plan), mask.count());
}

TEST(FaultsMainThread, AMaskThatCannotBeSetIsANote) {
  Plan plan = plan_with_main(CpuSet::from_list({4000, 4001}));
  Seen s;
  ASSERT_NO_THROW(s = pin_on_a_thread(plan));
  EXPECT_FALSE(s.pin.pinned);
  EXPECT_EQ(s.after, s.before) << "the thread runs where it ran";
  EXPECT_EQ(s.pin.note,
            "main thread not pinned: the plan's main CPUs 4000-4001 are not among "
            "the CPUs this thread may use (" +
                s.before.to_string() + ")");
  EXPECT_EQ(plan.reason("main_thread"), s.pin.note);

  Plan none = plan_with_main(CpuSet());
  EXPECT_EQ(pin_on_a_thread(none).pin.note, "main thread not pinned: the plan names no main CPUs");
  EXPECT_EQ(main_threads(none), 1);
}

}  // namespace
}  // namespace stoker
