// A thread the system refuses to start (ulimit -u, a pids cgroup's pids.max) is a
// stoker::Error naming the thread and the limit with its numbers; the threads already
// started are stopped and joined, and the process lives on. Each case runs in a forked
// child under a real limit: as user nobody with a small RLIMIT_NPROC, or in a pids cgroup
// with a small pids.max (root only; skipped with the reason elsewhere).
#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <system_error>

#include "child_process.hpp"
#include "loader_fixture.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/sources/tar_source.hpp"
#include "tar_writer.hpp"

using namespace stoker;

namespace {

// Reports a failed check from the child and gives its exit status.
int fail(FILE* out, int code, const std::string& what) {
  std::fprintf(out, "FAIL %s\n", what.c_str());
  return code;
}

// Builds the loader and writes its error to `out`; 0 when it was refused with a stoker::Error
// and every thread it started is gone again.
int expect_refused(FILE* out, const std::function<void()>& build) {
  const int before = test::thread_count();
  try {
    build();
    return fail(out, 10, "it was not refused");
  } catch (const Error& e) {
    std::fprintf(out, "%s\n", e.what());
  }
  if (test::thread_count() != before) {
    return fail(out, 11,
                std::to_string(test::thread_count()) + " threads after the error, " +
                    std::to_string(before) + " before");
  }
  return 0;
}

// After a refusal the process carries on: a loader that fits delivers a whole epoch.
int still_works(FILE* out, const test::TokenSetup& t) {
  Loader ok(t.source, t.copy, test::test_options(4, 2));
  uint64_t batches = 0;
  for (Batch& b : ok) batches += b.size() > 0;
  if (batches != ok.batches_per_epoch()) return fail(out, 12, "the loader that fits did not run");
  return 0;
}

// Holds threads until released: used up to the limit, so that the next thread is refused.
class Ballast {
 public:
  ~Ballast() {
    {
      std::lock_guard lk(mu_);
      go_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void fill() {  // until the system says no
    for (;;) {
      try {
        threads_.emplace_back([this] {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [this] { return go_; });
        });
      } catch (const std::system_error&) {
        return;
      }
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool go_ = false;
  std::vector<std::thread> threads_;
};

std::shared_ptr<TarShardSource> streamed_shard(const test::TempDir& dir) {
  test::TarWriter w;
  for (int i = 0; i < 8; ++i) {
    w.add(std::to_string(i) + ".jpg", std::string(16, static_cast<char>('a' + i)));
    w.add(std::to_string(i) + ".cls", std::to_string(i));
  }
  const auto tar = w.finish();
  const std::string path = dir.file("shard.tar");
  test::write_bytes(path, tar.data(), tar.size());
  return std::make_shared<TarShardSource>(std::vector<std::string>{path},
                                          TarShardOptions{.labels = true, .stream = true});
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(FaultsThreads, BeyondUlimitUEveryThreadIsAClearErrorAndTheProcessLives) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run a child as user nobody";
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user nobody on this machine";
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  ::setenv("STOKER_CACHE_DIR", "none", 1);
  test::TokenSetup t;
  const auto shard = streamed_shard(t.dir);  // indexed here, read by the child
  test::TempDir metrics_dir;
  ::chmod(metrics_dir.file("").c_str(), 0777);
  const test::ChildResult r = test::run_in_child([&](FILE* out) {
    // RLIMIT_NPROC counts every thread of the real user: room for 4 more than nobody runs.
    const rlimit lim{8, 8};
    if (::setrlimit(RLIMIT_NPROC, &lim) != 0 || ::setgroups(0, nullptr) != 0 ||
        ::setgid(gid) != 0 || ::setuid(uid) != 0) {
      return fail(out, 2, "cannot become nobody under ulimit -u 8");
    }
    const ThreadRoom room = thread_room();
    std::fprintf(out, "room: %s\n", room.text().c_str());
    if (!room.room || *room.room >= 8) return fail(out, 3, "ulimit -u 8 is not seen");
    if (*room.room == 0) return fail(out, 4, "nobody already runs 8 threads elsewhere");
    // 40 workers: the pool gets a few, then the system says no.
    if (int rc = expect_refused(out, [&] { Loader(t.source, t.copy, test::test_options(4, 40)); }))
      return rc;
    if (int rc = still_works(out, t)) return rc;
    // With no room left, the stream reader and the metrics writer are refused the same way.
    Ballast ballast;
    ballast.fill();
    auto stream_options = test::test_options(2, 1);
    stream_options.shuffle_buffer = 4;
    if (int rc = expect_refused(out, [&] { Loader(shard, t.copy, stream_options); })) return rc;
    if (int rc = expect_refused(out, [&] {
          MetricsWriter(metrics_dir.file("m.prom"), {}, [] { return LoaderStats{}; });
        }))
      return rc;
    return 0;
  });
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "worker thread ")) << r.out;
  EXPECT_TRUE(contains(r.out, " of 40: cannot be started: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "ulimit -u (RLIMIT_NPROC) is 8 and user nobody (uid " +
                                  std::to_string(uid) + ") runs "))
      << r.out;
  EXPECT_TRUE(contains(r.out, "use fewer workers")) << r.out;
  EXPECT_TRUE(contains(r.out, "the stream reader thread: cannot be started")) << r.out;
  EXPECT_TRUE(contains(r.out, "the metrics writer thread (STOKER_METRICS): cannot be started"))
      << r.out;
  ::unsetenv("STOKER_CACHE_DIR");
}

// A pids cgroup (v1 here; v2 where the controller is enabled) with a small pids.max.
TEST(FaultsThreads, BeyondACgroupsPidsMaxWorkersAreAClearError) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to make a pids cgroup";
  std::string top;
  for (const char* dir : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"}) {
    if (std::filesystem::exists(std::string(dir) + "/cgroup.procs") &&
        (std::filesystem::exists(std::string(dir) + "/pids.max") ||
         std::filesystem::exists(std::string(dir) + "/tasks"))) {
      top = dir;
      break;
    }
  }
  const std::string group = top + "/stoker-faults-" + std::to_string(::getpid());
  if (top.empty() || ::mkdir(group.c_str(), 0755) != 0 ||
      !std::filesystem::exists(group + "/pids.max")) {
    ::rmdir(group.c_str());
    GTEST_SKIP() << "cannot make a pids cgroup under /sys/fs/cgroup (no pids controller, or "
                    "not writable here)";
  }
  std::ofstream(group + "/pids.max") << 6;
  test::TokenSetup t;
  const test::ChildResult r = test::run_in_child([&](FILE* out) {
    std::ofstream(group + "/cgroup.procs") << ::getpid();
    const ThreadRoom room = thread_room();
    std::fprintf(out, "room: %s\n", room.text().c_str());
    if (int rc = expect_refused(out, [&] { Loader(t.source, t.copy, test::test_options(4, 40)); }))
      return rc;
    return still_works(out, t);
  });
  // The child is gone: the cgroup can go too (nothing of the test is left behind).
  for (int i = 0; i < 100 && ::rmdir(group.c_str()) != 0; ++i) ::usleep(10000);
  EXPECT_FALSE(std::filesystem::exists(group)) << group << " was left behind";
  ASSERT_EQ(r.status, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, " of 40: cannot be started: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "pids.max of cgroup " + group + " is 6 with ")) << r.out;
}
