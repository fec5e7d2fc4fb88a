// The run record's writer and its three moments: loader close, exit, SIGTERM (once).
#include "stoker/loader/run_recorder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

// The process's one recorded loader and the hooks that write its record.
struct RecorderHooks {
  std::mutex mu;
  RunRecorder* active = nullptr;
  bool written = false;
  bool installed = false;
  pid_t pid = 0;
  int wake[2] = {-1, -1}, done[2] = {-1, -1};  // handler -> thread, thread -> handler
  struct sigaction previous {};

  static RecorderHooks& get() {
    static RecorderHooks* hooks = new RecorderHooks;  // never destroyed: exit and signals use it
    return *hooks;
  }
  void write_active(const char* end) {
    std::lock_guard lock(mu);
    if (active && pid == ::getpid()) active->write_locked(end);
  }
  void install();  // mu held
};

namespace {

void on_exit() {
  RecorderHooks::get().write_active("exit");
}

// Async-signal-safe: a pipe write, a bounded poll, sigaction, raise.
void on_sigterm(int sig, siginfo_t* info, void* context) {
  RecorderHooks& h = RecorderHooks::get();
  if (::getpid() == h.pid) {
    const char byte = 1;
    if (::write(h.wake[1], &byte, 1) == 1) {
      pollfd answer{h.done[0], POLLIN, 0};
      (void)::poll(&answer, 1, static_cast<int>(kSigtermWait.count() * 1000));
    }
  }
  ::sigaction(SIGTERM, &h.previous, nullptr);  // hand it on as before, from now on too
  if (h.previous.sa_flags & SA_SIGINFO) {
    if (h.previous.sa_sigaction) h.previous.sa_sigaction(sig, info, context);
  } else if (h.previous.sa_handler == SIG_DFL) {
    ::raise(SIGTERM);  // blocked in this handler: ends the process once it returns
  } else if (h.previous.sa_handler != SIG_IGN) {
    h.previous.sa_handler(sig);
  }
}

void sigterm_thread() {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);  // the handler never runs on this thread
  RecorderHooks& h = RecorderHooks::get();
  char byte = 0;
  while (::read(h.wake[0], &byte, 1) != 1) {
  }
  h.write_active("sigterm");
  (void)::write(h.done[1], &byte, 1);
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

}  // namespace

void RecorderHooks::install() {
  if (installed && pid == ::getpid()) return;
  if (installed) {  // a forked child: its parent's loader and record are not its own
    active = nullptr;
    written = false;
  }
  installed = true;
  pid = ::getpid();
  std::atexit(on_exit);
  struct sigaction now {};
  if (::sigaction(SIGTERM, nullptr, &now) != 0 || now.sa_handler == SIG_IGN) return;
  if (::pipe2(wake, O_CLOEXEC) != 0 || ::pipe2(done, O_CLOEXEC) != 0) return;
  try {
    std::thread(sigterm_thread).detach();
  } catch (const std::exception&) {
    return;  // no thread: the record is still written at close and exit
  }
  struct sigaction ours {};
  ours.sa_sigaction = on_sigterm;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  ::sigaction(SIGTERM, &ours, &previous);
}

std::optional<RecordTarget> RecordTarget::from_environment(uint64_t rank) {
  const EnvGetter env = process_env();
  const std::optional<std::string> dir = env_nonempty(env, kRunRecordDirVar);
  if (!dir) return std::nullopt;
  // The Slurm task's rank names the file: the collector looks for its tasks' ranks.
  const uint64_t task = env_whole(env, "SLURM_PROCID", 0, kMaxRanks - 1).value_or(rank);
  return RecordTarget{*dir, env("SLURM_JOB_ID").value_or(""), env("SLURM_STEP_ID").value_or(""),
                      env_nonempty(env, "SLURMD_NODENAME").value_or(host_name()), task};
}

RunRecord make_run_record(const LoaderStats& s, const Plan& plan, const RecordTarget& target,
                          const std::string& end) {
  RunRecord r;
  r.job = target.job;
  r.step = target.step;
  r.node = target.node;
  r.rank = target.rank;
  r.profile = plan.profile;
  r.local_rank = static_cast<uint64_t>(std::max(plan.local_rank, 0));
  r.cpus = plan.cpus.to_string();
  r.main_cpus = plan.main_cpus.to_string();
  r.worker_cpus = plan.worker_cpus.to_string();
  r.numa = join_numbers(plan.numa);
  r.gpu = plan.gpu;
  r.cores = plan.cpus.count();
  r.workers = s.workers;
  r.prefetch = plan.prefetch;
  r.prefetch_max = s.max_depth;
  r.pin = plan.pin_memory;
  r.mem_budget = s.mem_budget;
  r.slot_bytes = s.slot_bytes;
  const int held = std::max(0, s.slots - s.max_depth);
  if (s.slot_bytes > 0 && s.mem_budget > 0) {
    const uint64_t fit = s.mem_budget / s.slot_bytes;
    r.budget_depth = static_cast<int>(
        std::min<uint64_t>(fit > static_cast<uint64_t>(held) ? fit - held : 0,
                           static_cast<uint64_t>(limits::kMaxPrefetch)));
  }
  r.prefetch_max_reason = plan.reason("prefetch_max").substr(0, 256);
  r.samples = s.samples;
  r.batches = s.batches;
  r.seconds = static_cast<double>(s.wall_ns) / 1e9;
  r.samples_per_s = r.seconds > 0 ? static_cast<double>(s.samples) / r.seconds : 0.0;
  r.wait_share = std::clamp(s.wait_share, 0.0, 1.0);
  r.depth_reached = std::max(s.timeline.deepest(), s.depth);
  r.at_max_share = s.wall_ns ? std::min(1.0, static_cast<double>(s.timeline.at_max_ns()) /
                                                 static_cast<double>(s.wall_ns))
                             : 0.0;
  r.skipped = s.skipped;
  r.stream_bytes = s.stream_reads.bytes;
  r.decode_warnings = s.decode_warnings;  // optional in the record: older ones lack it
  r.end = end;
  const RunTimeline& tl = s.timeline;
  for (int i = 0; i < tl.points(); ++i) {
    if (!tl.point(i).used) continue;
    const double t = static_cast<double>(std::min(tl.last_ns(), (i + 1) * tl.span_ns())) / 1e9;
    r.timeline.push_back({t, tl.wait_share(i), tl.point(i).depth});
  }
  return r;
}

RunRecorder::RunRecorder(RecordTarget target, Snapshot snapshot, const Plan& plan)
    : target_(std::move(target)), snapshot_(std::move(snapshot)), plan_(plan) {
  RecorderHooks& h = RecorderHooks::get();
  std::lock_guard lock(h.mu);
  h.install();
  if (!h.active) h.active = this;
}

RunRecorder::~RunRecorder() {
  RecorderHooks& h = RecorderHooks::get();
  std::lock_guard lock(h.mu);
  if (h.active == this) h.active = nullptr;
}

std::string RunRecorder::path() const {
  return target_.dir + "/" + run_record_file(target_.rank);
}

void RunRecorder::write(const char* end) {
  RecorderHooks& h = RecorderHooks::get();
  std::lock_guard lock(h.mu);
  if (h.active == this) write_locked(end);
}

void RunRecorder::write_locked(const char* end) {
  RecorderHooks& h = RecorderHooks::get();
  if (h.written) return;
  h.written = true;
  try {
    // In a container the folder is usually not there: /run is the container's own tmpfs.
    write_file_atomically(path(), to_json(make_run_record(snapshot_(), plan_, target_, end)) + "\n",
                          "the plugin's record folder (" + std::string(kRunRecordDirVar) +
                              ") must be reachable: in a container, mount it (pyxis: "
                              "--container-mounts=DIR, or the site's enroot mounts.d; see the "
                              "user guide's Containers)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: rank %llu: cannot write the run record %s: %s\n",
                 static_cast<unsigned long long>(target_.rank), path().c_str(), e.what());
  }
}

std::unique_ptr<RunRecorder> RunRecorder::from_environment(uint64_t rank, Snapshot snapshot,
                                                           const Plan& plan) {
  std::optional<RecordTarget> target = RecordTarget::from_environment(rank);
  if (!target) return nullptr;
  return std::make_unique<RunRecorder>(std::move(*target), std::move(snapshot), plan);
}

}  // namespace stoker
