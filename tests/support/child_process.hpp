// Running part of a test in a forked child: a thread limit set on the child alone, a fork
// of a process that holds a loader. The child's report comes back through a pipe; a child
// that outlives its timeout is killed and reported as hung, so a hang fails the test
// instead of stalling it.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>

namespace stoker::test {

struct ChildResult {
  int status = -1;    // the exit status when it exited, else -1
  int signal = 0;     // the signal that killed it, 0 when it exited
  bool hung = false;  // it outlived the timeout and was killed
  std::string out;    // what it wrote to its FILE*
  std::string describe() const {
    return (hung ? "hung (killed); " : "") +
           (signal ? "killed by signal " + std::to_string(signal)
                   : "exit status " + std::to_string(status)) +
           "; it said: " + out;
  }
};

// Forks; the child runs body(out) and exits with its return value through _exit (no
// atexit handlers or static destructors: those belong to the test process). An exception
// from body is written to `out` and the child exits 99. `on_fork` runs in the parent with
// the child's pid before the child's report is awaited.
inline ChildResult run_in_child(const std::function<int(FILE*)>& body,
                                std::chrono::seconds timeout = std::chrono::seconds(60),
                                const std::function<void(pid_t)>& on_fork = {}) {
  int fds[2];
  ChildResult r;
  if (::pipe(fds) != 0) return r;
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    FILE* out = ::fdopen(fds[1], "w");
    std::setvbuf(out, nullptr, _IONBF, 0);
    int code = 99;
    try {
      code = body(out);
    } catch (const std::exception& e) {
      std::fprintf(out, "exception: %s\n", e.what());
    } catch (...) {
      std::fprintf(out, "unknown exception\n");
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return r;
  }
  if (on_fork) on_fork(pid);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fds[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
      r.hung = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child closed its end: it is exiting
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  // The pipe closed; the exit itself may still hang (a destructor joining a thread).
  int st = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline && !r.hung) {
      r.hung = true;
      ::kill(pid, SIGKILL);
    }
    ::usleep(10000);
  }
  if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

// Threads of the calling process now.
inline int thread_count() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.exists();
  return n;
}

}  // namespace stoker::test
