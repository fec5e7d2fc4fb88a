// A token or record file that shrinks while the loader has it mapped (rewritten in place,
// truncated) is a stoker::Error naming the file, not a SIGBUS that kills the process; a
// SIGBUS anywhere else still reaches the handler that was there before stoker's.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csetjmp>

#include "loader_fixture.hpp"

using namespace stoker;

namespace {

// Takes batches until the loop ends or throws; the error's text, or "" at a clean end.
std::string run_epoch(Loader& loader) {
  try {
    for (Batch& b : loader) (void)b;
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// TSan's runtime delivers SIGBUS through its own handler, not the loader's recovery point
// (the process dies of the bus error, whichever thread touched the page); the main build
// and the ASan build run these tests.
#if defined(__SANITIZE_THREAD__)
#define STOKER_SKIP_UNDER_TSAN() GTEST_SKIP() << "SIGBUS recovery cannot run under TSan"
#else
#define STOKER_SKIP_UNDER_TSAN() (void)0
#endif

}  // namespace

TEST(FaultsMappedFile, ATokenFileThatShrinksWhileLoadedIsAnErrorNamingIt) {
  STOKER_SKIP_UNDER_TSAN();
  test::TokenSetup t(2000, 64);  // 256 KiB of tokens: 63 pages past the first
  const std::string path = t.source->location(0).substr(0, t.source->location(0).find('@'));
  Loader loader(t.source, t.copy, test::test_options(8, 2));
  ASSERT_TRUE(loader.next());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // rewritten in place, shorter
  const std::string error = run_epoch(loader);
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_NE(error.find("shrank while in use: it had 256002 bytes when opened and is 4096 bytes "
                       "now"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("rewrite data files under new names"), std::string::npos) << error;
  // The same loader keeps saying so (no stale or zero data later), and the process goes on.
  EXPECT_NE(run_epoch(loader).find("shrank while in use"), std::string::npos);
  test::TokenSetup fresh(100, 64);
  Loader other(fresh.source, fresh.copy, test::test_options(8, 2));
  EXPECT_EQ(run_epoch(other), "");
}

TEST(FaultsMappedFile, ARecordLabelsFileThatShrinksIsAnErrorNamingIt) {
  STOKER_SKIP_UNDER_TSAN();
  test::TempDir dir;
  const std::string data = dir.file("records.bin"), labels = dir.file("labels.bin");
  std::vector<uint8_t> bytes(4096 * 16, 7);
  std::vector<int64_t> ids(4096);
  test::write_bytes(data, bytes.data(), bytes.size());
  test::write_bytes(labels, ids.data(), ids.size() * sizeof(int64_t));
  auto source = std::make_shared<RecordFileSource>(data, 16, labels);
  Loader loader(source, std::make_shared<CopyTransform>(source->spec()), test::test_options(64, 2));
  ASSERT_TRUE(loader.next());
  ASSERT_EQ(::truncate(labels.c_str(), 0), 0);
  const std::string error = run_epoch(loader);
  EXPECT_NE(error.find(labels + ": reading sample "), std::string::npos) << error;
  EXPECT_NE(error.find(") failed: shrank while in use: it had 32768 bytes when opened and is 0 "
                       "bytes now"),
            std::string::npos)
      << error;
}

namespace {
sigjmp_buf g_test_jump;
volatile sig_atomic_t g_test_handler_ran = 0;
void test_handler(int, siginfo_t*, void*) {
  g_test_handler_ran = 1;
  siglongjmp(g_test_jump, 1);
}
}  // namespace

TEST(FaultsMappedFile, ASigbusOutsideStokersReadsReachesThePreviousHandler) {
  struct sigaction mine {
  }, before{};
  mine.sa_sigaction = test_handler;
  mine.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGBUS, &mine, &before), 0);
  // stoker's handler goes in with its first mapping (unless an earlier test put it there).
  test::TokenSetup t(100, 64);
  struct sigaction now {};
  ::sigaction(SIGBUS, nullptr, &now);
  if (now.sa_sigaction == test_handler) {
    ::sigaction(SIGBUS, &before, nullptr);
    GTEST_SKIP() << "stoker's handler went in before this test's (run the test alone, as "
                    "ctest does: one process per test)";
  }
  // A mapping of the test's own, past its file's end: a SIGBUS outside any stoker read.
  test::TempDir dir;
  const std::string path = dir.file("short.bin");
  test::write_bytes(path, "x", 1);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, 2 * 4096, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  volatile char c = 0;
  if (sigsetjmp(g_test_jump, 1) == 0) c = static_cast<const char*>(p)[4096];
  (void)c;
  ::munmap(p, 2 * 4096);
  EXPECT_EQ(g_test_handler_ran, 1) << "the SIGBUS did not reach the earlier handler";
  ::sigaction(SIGBUS, &before, nullptr);
}
