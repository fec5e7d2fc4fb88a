// Where the loader's workers run: the one rule, used by the Loader (and so `stoker bench`
// and stoker.Loader), and by Python's Plan.worker_shares() for torch DataLoader workers.
#pragma once

#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

// Splits `cpus` into `n` shares: contiguous, as even as possible, when there are at least
// n CPUs; one CPU each, reused round-robin, when there are fewer. Empty in -> empty shares.
std::vector<CpuSet> split_cpus(const CpuSet& cpus, int n);

// The CPUs of each of `workers` workers of `plan`:
//  - up to one worker per worker CPU: the plan's worker CPUs, split (split_cpus);
//  - more workers than worker CPUs: one CPU each over all the rank's CPUs (plan.cpus),
//    the worker CPUs first and then the others (the training loop's), round-robin. So no
//    worker shares a CPU while another CPU of the rank has none, and extra workers stack
//    on worker CPUs before the training loop's.
// Empty shares (not pinned) when the plan names no worker CPUs.
std::vector<CpuSet> worker_shares(const Plan& plan, int workers);

}  // namespace stoker
