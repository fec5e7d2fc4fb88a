// The recovery point around reads from mapped files (stoker/sources/mapped_read.hpp) and the
// SIGBUS handler behind it.
//
// Why a handler and not pread: a sample read from the mapping costs one memcpy out of the
// page cache; pread would add a system call and a second copy per sample. The recovery
// point costs a sigsetjmp without the signal mask (no system call) per sample; that cost has
// not been measured apart (docs/reliability.md has the fault's row).
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <csetjmp>
#include <cstring>
#include <map>
#include <mutex>

#include "sources/mapped_file.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/mapped_read.hpp"

namespace stoker {

namespace {

// The read in progress on this thread, found by the handler through a pthread key:
// pthread_getspecific only reads the thread's descriptor (no lock, no allocation), where a
// C++ thread_local of a dlopen'ed module (the Python extension) may be set up lazily with
// malloc, and an initial-exec one does not fit next to PyTorch's ("cannot allocate memory
// in static TLS block").
struct Guard {
  sigjmp_buf env;
  const std::byte* begin = nullptr;
  const std::byte* end = nullptr;
  const std::byte* volatile fault = nullptr;
};
pthread_key_t g_guard_key;

struct sigaction g_previous {};

void pass_on(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
      g_previous.sa_handler != nullptr) {
    g_previous.sa_handler(sig);
    return;
  }
  // The default action: a fault happens again when the handler returns, now unhandled;
  // a SIGBUS sent by kill() is raised again.
  ::signal(sig, SIG_DFL);
  if (info->si_code <= 0) ::raise(sig);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  auto* g = static_cast<Guard*>(::pthread_getspecific(g_guard_key));
  const auto* at = static_cast<const std::byte*>(info->si_addr);
  if (g != nullptr && info->si_code > 0 && at >= g->begin && at < g->end) {
    g->fault = at;
    siglongjmp(g->env, 1);
  }
  pass_on(sig, info, context);
}

// The mappings alive, by first byte, for the error's file name (never read by the handler).
struct Mapping {
  const std::byte* end;
  std::string path;
  uint64_t size;
};
std::mutex g_mappings_mu;
std::map<const std::byte*, Mapping>& mappings() {
  static auto* m = new std::map<const std::byte*, Mapping>;  // outlives static destructors
  return *m;
}

Error shrank_error(const std::byte* at) {
  std::lock_guard lk(g_mappings_mu);
  auto it = mappings().upper_bound(at);
  if (it == mappings().begin() || at >= std::prev(it)->second.end) {
    return Error("mapped file", "a mapped file shrank while in use (SIGBUS)",
                 "restart the job; rewrite data files under new names, not in place");
  }
  --it;
  const Mapping& m = it->second;
  struct stat st {};
  const std::string now = ::stat(m.path.c_str(), &st) == 0
                              ? "is " + std::to_string(st.st_size) + " bytes now"
                              : "is gone now";
  return Error(m.path,
               "shrank while in use: it had " + std::to_string(m.size) + " bytes when opened and " +
                   now + "; byte " + std::to_string(at - it->first) + " cannot be read",
               "restart the job; rewrite data files under new names (write, then rename), "
               "not in place");
}

// The key and the handler, once per process (before the first mapping or read).
void install_once() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    ::pthread_key_create(&g_guard_key, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    // SA_NODEFER: the jump out of the handler leaves SIGBUS unblocked for the next fault.
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

}  // namespace

void register_mapping(const std::byte* begin, uint64_t size, const std::string& path) {
  install_once();
  std::lock_guard lk(g_mappings_mu);
  mappings()[begin] = {begin + size, path, size};
}

void unregister_mapping(const std::byte* begin) {
  std::lock_guard lk(g_mappings_mu);
  mappings().erase(begin);
}

void read_sample_bytes(std::span<const std::byte> src,
                       void (*read)(const std::byte* bytes, size_t n, void* context),
                       void* context) {
  install_once();
  Guard g;
  g.begin = src.data();
  g.end = src.data() + src.size();
  if (sigsetjmp(g.env, 0) == 0) {  // 0: the mask is not saved (no system call)
    ::pthread_setspecific(g_guard_key, &g);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    read(src.data(), src.size(), context);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ::pthread_setspecific(g_guard_key, nullptr);
    return;
  }
  ::pthread_setspecific(g_guard_key, nullptr);
  throw shrank_error(g.fault);
}

void copy_sample_bytes(std::byte* dst, std::span<const std::byte> src) {
  read_sample_bytes(
      src, [](const std::byte* bytes, size_t n, void* out) { std::memcpy(out, bytes, n); }, dst);
}

}  // namespace stoker
