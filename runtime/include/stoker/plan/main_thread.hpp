// Applying a plan to the training loop's own thread: the promise that the plan's first
// MainCores run the training loop (docs/planner.md, "Planner rules", 4). Loader::for_this_process
// and Python's stoker.plan(apply=True) call it when they plan the process or read the plugin's
// plan.
#pragma once

#include <string>

#include "stoker/common/cpuset.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

struct MainThreadPin {
  bool pinned = false;
  CpuSet cpus;       // where the calling thread now runs (when pinned)
  std::string note;  // what was applied, or why not: "main thread pinned to CPUs 0 (...)"
};

// Pins the calling thread to plan.main_cpus, within the CPUs it may use now (a narrower
// outside binding, such as taskset, is kept), remembers the mask it had as the task's
// (task_cpu_mask, which later plans start from), and adds the note to the plan's reasons (field
// "main_thread"). Threads the calling thread creates afterwards (torch's and OpenMP's pools)
// inherit the mask; stoker's loader workers are pinned to their own shares. Never throws and never
// fails a job: a mask the thread cannot take is a note.
MainThreadPin pin_main_thread(Plan& plan);

// The threads a training loop's intra-op pools (torch, OpenMP, MKL, OpenBLAS) should run:
// one per CPU of the plan's main_cpus, at least 1.
int main_threads(const Plan& plan);

}  // namespace stoker
