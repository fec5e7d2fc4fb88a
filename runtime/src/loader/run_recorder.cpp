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
#include <type_traits>
#include <variant>

#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/loader/measure_values.hpp"
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
                      node_name(env), task};
}

RunRecord make_run_record(const LoaderStats& s, const Plan& plan, const RecordTarget& target,
                          const std::string& end) {
  RunRecord r;
  r.job = target.job;
  r.step = target.step;
  r.node = target.node;
  r.rank = target.rank;
  r.plan = plan;
  r.plan.reasons.clear();  // the record keeps one reason, below
  r.prefetch_max_reason = plan.reason("prefetch_max").substr(0, 256);
  for (const MeasureRow& row : run_measures()) {
    const MeasureValue v = measure_value(s, row.id);
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (std::is_same_v<Member, double RunRecord::*>) {
            r.*member = measure_in_base_unit(v, row.unit);
          } else if constexpr (std::is_same_v<Member, int RunRecord::*>) {
            r.*member = static_cast<int>(std::get<uint64_t>(v));
          } else if constexpr (!std::is_same_v<Member, std::monostate>) {
            r.*member = std::get<uint64_t>(v);  // a count, or the optional one
          }
        },
        row.record);
  }
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
