// Leaves the run record (record/run_record.hpp) of this process's loader in the folder the
// plugin names (STOKER_RUN_RECORD_DIR): once, at the first of loader close, process exit
// and SIGTERM (Slurm's signal at a job's end or time limit).
//
// One loader per process is recorded: the first made by Loader::for_this_process while none
// is alive (the training loader; an evaluation loader made beside it is not). Nothing runs
// per batch: the loader's fixed-size timeline is read once, when the record is written.
//
// SIGTERM: a handler is installed only when the folder is set. It wakes a thread of its own
// that writes the record (the handler itself only writes to a pipe and waits for the
// answer, at most kSigtermWait), then hands the signal on as before: to the handler that was
// installed (Python's, a user's), else the default action ends the process. A forked child
// hands it on at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "stoker/loader/loader_stats.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/record/run_record.hpp"

namespace stoker {

inline constexpr std::chrono::seconds kSigtermWait{5};

// Where the record goes and whom it names.
struct RecordTarget {
  std::string dir;  // the folder; the file is run_record_file(rank) in it
  std::string job, step, node;
  uint64_t rank = 0;
  // From STOKER_RUN_RECORD_DIR, SLURM_JOB_ID, SLURM_STEP_ID, SLURMD_NODENAME (else the
  // host name) and SLURM_PROCID (else `rank`); nullopt when STOKER_RUN_RECORD_DIR is unset
  // or empty. Throws stoker::Error for a garbled SLURM_PROCID.
  static std::optional<RecordTarget> from_environment(uint64_t rank);
};

// The record of a run from the loader's stats and the plan it ran. Pure.
RunRecord make_run_record(const LoaderStats& stats, const Plan& plan, const RecordTarget& target,
                          const std::string& end);

class RunRecorder {
 public:
  using Snapshot = std::function<LoaderStats()>;
  // Registers this loader as the process's recorded one unless another one is, installs the
  // exit and SIGTERM hooks once per process. `snapshot` and `plan` must outlive it.
  RunRecorder(RecordTarget target, Snapshot snapshot, const Plan& plan);
  ~RunRecorder();  // unregisters (it does not write: call write("close") first)
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  // Writes the record now unless this process already wrote one or this is not the recorded
  // loader. A failure is one line on stderr naming the file, never an exception.
  void write(const char* end);
  std::string path() const;

  // A recorder when STOKER_RUN_RECORD_DIR is set, else null.
  static std::unique_ptr<RunRecorder> from_environment(uint64_t rank, Snapshot snapshot,
                                                       const Plan& plan);

 private:
  friend struct RecorderHooks;
  void write_locked(const char* end);  // the process's recorder lock held

  RecordTarget target_;
  Snapshot snapshot_;
  const Plan& plan_;
};

}  // namespace stoker
