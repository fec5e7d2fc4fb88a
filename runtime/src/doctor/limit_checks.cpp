// Checks of the process's limits against what the plan will use: open files, /dev/shm,
// CPU quota, memory.
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "stoker/common/values.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {

namespace {

std::string limit_text(uint64_t v) {
  return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v);
}

std::string cpus_text(double cpus) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", cpus);
  return buf;
}

}  // namespace

Finding check_open_files(uint64_t soft_limit, uint64_t hard_limit, int workers,
                         int files_per_worker) {
  const uint64_t needed = static_cast<uint64_t>(std::max(workers, 1)) *
                              static_cast<uint64_t>(std::max(files_per_worker, 1)) +
                          kProcessFiles;
  const std::string assumed = std::to_string(workers) + " workers x " +
                              std::to_string(files_per_worker) + " files + " +
                              std::to_string(kProcessFiles) + " for the process";
  Finding f{"nofile", Severity::Ok, "", ""};
  if (soft_limit == RLIM_INFINITY || soft_limit >= needed) {
    f.message = "open-file limit " + limit_text(soft_limit) + " covers the " +
                std::to_string(needed) + " needed (assumed " + assumed + ")";
    return f;
  }
  f.severity = Severity::Error;
  f.message = "open-file limit (soft) is " + limit_text(soft_limit) + ", below the " +
              std::to_string(needed) + " needed (assumed " + assumed +
              "): workers fail with 'Too many open files'";
  if (hard_limit == RLIM_INFINITY || hard_limit >= needed)
    f.fix = "raise it in the job script: ulimit -n " + limit_text(hard_limit) +
            " (the hard limit), or sbatch --propagate=NOFILE from a shell with a higher limit";
  else
    f.fix = "the hard limit " + limit_text(hard_limit) +
            " is too low as well: ask the admin to raise nofile in /etc/security/limits.conf "
            "and slurmd's LimitNOFILE, or run fewer workers (--stoker-workers)";
  return f;
}

std::optional<FsSpace> filesystem_space(const std::string& path) {
  struct statvfs s {};
  if (statvfs(path.c_str(), &s) != 0) return std::nullopt;
  return FsSpace{static_cast<uint64_t>(s.f_blocks) * s.f_frsize,
                 static_cast<uint64_t>(s.f_bavail) * s.f_frsize};
}

Finding check_shm(const std::string& path, const std::optional<FsSpace>& space,
                  uint64_t prefetch_budget) {
  Finding f{"shm", Severity::Ok, "", ""};
  if (!space) {
    f.severity = Severity::Warn;
    f.message = path +
                " is missing: PyTorch DataLoader worker processes cannot pass batches "
                "(stoker's own loader uses threads and does not need it)";
    f.fix = "mount a tmpfs there (mount -t tmpfs -o size=8g tmpfs " + path +
            "; in containers: --shm-size=8g), or use stoker's Loader";
    return f;
  }
  const uint64_t want = std::max(kMinShmBytes, 2 * prefetch_budget);
  const std::string sizes = path + " is " + values::format_bytes(space->size) + " (" +
                            values::format_bytes(space->available) + " free)";
  if (space->size >= want) {
    f.message = sizes + ", at least max(1 GiB, 2 x the prefetch budget " +
                values::format_bytes(prefetch_budget) + ")";
    return f;
  }
  f.severity = Severity::Warn;
  f.message = sizes + ", below max(1 GiB, 2 x the prefetch budget " +
              values::format_bytes(prefetch_budget) +
              "): PyTorch DataLoader workers crash with 'bus error' or 'No space left on device'";
  f.fix = "enlarge it to " + values::format_bytes(want) +
          " or more (mount -o remount,size=" + std::to_string((want + (1u << 30) - 1) >> 30) +
          "G " + path +
          "; in containers: --shm-size), or use stoker's Loader (threads, no /dev/shm)";
  return f;
}

Finding check_cpu_quota(std::optional<double> quota_cpus, int granted_cpus) {
  Finding f{"cpu_quota", Severity::Ok, "", ""};
  const std::string granted = std::to_string(granted_cpus) + " CPUs in the mask";
  if (!quota_cpus) {
    f.message = "no cgroup CPU quota; " + granted;
    return f;
  }
  // A quota within 1 % of the mask is the mask itself expressed as time (Slurm does this).
  if (*quota_cpus >= granted_cpus * 0.99) {
    f.message = "cgroup CPU quota " + cpus_text(*quota_cpus) + " CPUs covers the " + granted;
    return f;
  }
  f.severity = Severity::Warn;
  f.message = "cgroup CPU quota is " + cpus_text(*quota_cpus) + " CPUs but the mask has " +
              std::to_string(granted_cpus) + ": threads on every CPU are throttled, and the " +
              "loader's workers stall the training loop each period";
  f.fix =
      "ask for a quota matching the cores (Slurm: ConstrainCores=yes without a CPU quota), "
      "or run " +
      std::to_string(std::max(1, static_cast<int>(std::floor(*quota_cpus)))) +
      " threads at most (--stoker-workers=" +
      std::to_string(std::max(1, static_cast<int>(std::floor(*quota_cpus)) - 1)) + ")";
  return f;
}

Finding check_memory(uint64_t mem_limit, uint64_t prefetch_budget, int ranks) {
  Finding f{"memory", Severity::Ok, "", ""};
  ranks = std::max(ranks, 1);
  const uint64_t total = prefetch_budget * static_cast<uint64_t>(ranks);
  const std::string what = std::to_string(ranks) + " rank(s) x prefetch budget " +
                           values::format_bytes(prefetch_budget) + " = " +
                           values::format_bytes(total) + " against the memory limit " +
                           values::format_bytes(mem_limit);
  if (mem_limit == 0) {
    f.severity = Severity::Info;
    f.message = "memory limit unknown; " + what;
    return f;
  }
  if (total > mem_limit) {
    f.severity = Severity::Error;
    f.message = what + ": the job will be killed for memory";
  } else if (total > mem_limit / 2) {
    f.severity = Severity::Warn;
    f.message = what + ": over half, little is left for the model and activations";
  } else {
    f.message = what;
    return f;
  }
  f.fix =
      "lower the prefetch (--stoker-prefetch, or the profile's MemShare) or ask for more "
      "memory (--mem, --mem-per-gpu)";
  return f;
}

}  // namespace stoker::doctor
