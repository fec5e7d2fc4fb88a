// The admin's job log as slurmstepd writes it, as root, on real files: whatever a user can
// plant in a job log folder (a FIFO, a file of their own, a link) and whatever a filesystem
// does (a full disk, a server that does not answer) is refused or survived at once, never
// waited on, never written through.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "child_process.hpp"
#include "frozen_filesystem.hpp"
#include "job_log.hpp"

using namespace stoker;
using namespace stoker::spank;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kOtherUser = 4242;  // a user of the cluster: no account needed to own files

// A folder for one test, removed at its end.
struct Folder {
  fs::path path;
  explicit Folder(fs::perms mode = fs::perms(0755)) {
    static int n = 0;
    path = fs::path(::testing::TempDir()) /
           ("stoker_job_log_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
    fs::permissions(path, mode);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::trunc) << text;
}

// append_to_log in a child, so that a write that waits for good fails the test (hung) instead
// of stalling it; its answer, and how long it took.
struct Appended {
  test::ChildResult child;
  double seconds = 0;
};
Appended append_in_child(const std::string& path, const std::vector<std::string>& lines) {
  const auto start = std::chrono::steady_clock::now();
  Appended a;
  a.child = test::run_in_child(
      [&](FILE* out) {
        std::fprintf(out, "%s", append_to_log(path, lines).c_str());
        return 0;
      },
      std::chrono::seconds(30));
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

bool root() {
  return ::geteuid() == 0;
}

}  // namespace

// A run on the plugin before the job log's safety fixes: FIFOs planted as n1.jsonl and n2.jsonl in
// a job_log= folder held both slurmstepds in task_exit for good. A folder users may write to must
// be sticky, and there each name a user planted is refused at once, without blocking.
TEST(FaultsJobLog, APlantedFifoIsRefusedAtOnce) {
  if (!root()) GTEST_SKIP() << "needs root: the FIFO must be another user's";
  Folder logs(fs::perms(01777));
  const fs::path fifo = logs.path / "n1.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0622), 0);
  ASSERT_EQ(::chown(fifo.c_str(), kOtherUser, kOtherUser), 0);
  const Appended a = append_in_child(job_log_file(logs.str() + "/", "n1"), {"{\"a\":1}"});
  ASSERT_FALSE(a.child.hung) << "the writer waited on the FIFO: " << a.child.describe();
  EXPECT_NE(a.child.out.find(fifo.string()), std::string::npos) << a.child.out;
  EXPECT_NE(a.child.out.find("not a regular file"), std::string::npos) << a.child.out;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// A file a user owns in the folder would let them edit other users' lines, which
// `stoker report` trusts: not written, named.
TEST(FaultsJobLog, AUsersOwnFileIsNotWritten) {
  if (!root()) GTEST_SKIP() << "needs root: the file must be another user's";
  Folder logs(fs::perms(01777));
  const fs::path planted = logs.path / "n1.jsonl";
  write(planted, "forged\n");
  ASSERT_EQ(::chown(planted.c_str(), kOtherUser, kOtherUser), 0);
  const Appended a = append_in_child(job_log_file(logs.str() + "/", "n1"), {"{\"a\":1}"});
  ASSERT_FALSE(a.child.hung) << a.child.describe();
  EXPECT_NE(a.child.out.find(planted.string()), std::string::npos) << a.child.out;
  EXPECT_NE(a.child.out.find("uid 4242"), std::string::npos) << a.child.out;
  EXPECT_EQ(read_all(planted), "forged\n");
  // A link the user planted there: the kernel itself may refuse it (EACCES in a sticky
  // folder); either way the line says what stands there.
  const fs::path link = logs.path / "n2.jsonl";
  fs::create_symlink(planted, link);
  ASSERT_EQ(::lchown(link.c_str(), kOtherUser, kOtherUser), 0);
  const Appended b = append_in_child(job_log_file(logs.str() + "/", "n2"), {"{\"a\":1}"});
  EXPECT_NE(b.child.out.find(link.string() + ": cannot open the job log: is a symbolic link"),
            std::string::npos)
      << b.child.out;
  EXPECT_EQ(read_all(planted), "forged\n");
}

// A writer that waits on the lock of one stuck on a server that is away (held here by the
// test) is stopped at its own deadline: no second process waits in the kernel.
TEST(JobLog, AWriterWaitingOnTheNodesLockIsStoppedAtItsDeadline) {
  Folder lock, logs;
  const int held = ::open(lock.str().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  JobLogOptions options;
  options.lock_folder = lock.str();
  options.deadline = std::chrono::milliseconds(300);
  const std::string said = append_to_log(logs.str() + "/jobs.jsonl", {"x"}, options);
  ::close(held);
  EXPECT_NE(said.find("did not answer within 300 ms"), std::string::npos) << said;
  EXPECT_FALSE(fs::exists(logs.path / "jobs.jsonl"));
  options.deadline = kJobLogDeadline;
  EXPECT_EQ(append_to_log(logs.str() + "/jobs.jsonl", {"x"}, options), "");
  EXPECT_EQ(read_all(logs.path / "jobs.jsonl"), "x\n");
}

// A symbolic link as the log, a hard link to a file elsewhere, a link among the folders of the
// path: none is written through.
TEST(FaultsJobLog, NoLinkIsWrittenThrough) {
  Folder top;
  const fs::path victim = top.path / "victim";
  write(victim, "kept\n");
  fs::create_directory(top.path / "logs");
  fs::create_symlink(victim, top.path / "logs" / "n1.jsonl");
  fs::create_hard_link(victim, top.path / "logs" / "n2.jsonl");
  fs::create_directory_symlink(top.path / "logs", top.path / "linked");
  const Appended sym = append_in_child(job_log_file(top.str() + "/logs/", "n1"), {"x"});
  EXPECT_NE(sym.child.out.find("symbolic link"), std::string::npos) << sym.child.out;
  const Appended hard = append_in_child(job_log_file(top.str() + "/logs/", "n2"), {"x"});
  EXPECT_NE(hard.child.out.find("hard link"), std::string::npos) << hard.child.out;
  const Appended via = append_in_child(job_log_file(top.str() + "/linked/", "n3"), {"x"});
  EXPECT_NE(via.child.out.find(top.str() + "/linked"), std::string::npos) << via.child.out;
  EXPECT_NE(via.child.out.find("symbolic link"), std::string::npos) << via.child.out;
  EXPECT_FALSE(fs::exists(top.path / "logs" / "n3.jsonl")) << "written through the link";
  EXPECT_EQ(read_all(victim), "kept\n");
}

// The folder itself: one others may write to without the sticky bit (an NFS export with
// root_squash pushes admins there) lets a user replace or plant any name; one a user owns
// likewise. Refused, saying what to do; nothing is written.
TEST(FaultsJobLog, AFolderOthersMayWriteOrAUserOwnsIsRefused) {
  Folder open_to_all(fs::perms(0777));
  const Appended a = append_in_child(job_log_file(open_to_all.str() + "/", "n1"), {"x"});
  EXPECT_NE(a.child.out.find(open_to_all.str() + ": is writable by others"), std::string::npos)
      << a.child.out;
  EXPECT_NE(a.child.out.find("sticky"), std::string::npos) << a.child.out;
  EXPECT_FALSE(fs::exists(open_to_all.path / "n1.jsonl"));
  if (!root()) return;
  Folder users;
  ASSERT_EQ(::chown(users.path.c_str(), kOtherUser, kOtherUser), 0);
  const Appended b = append_in_child(job_log_file(users.str() + "/", "n1"), {"x"});
  EXPECT_NE(b.child.out.find(users.str() + ": is owned by uid 4242"), std::string::npos)
      << b.child.out;
  EXPECT_FALSE(fs::exists(users.path / "n1.jsonl"));
}

// A full disk cuts a line short: one line naming the log and the lines written. The next line
// (of this step or a later one) must not be glued to the part: it starts on a line of its own,
// and the part is a broken line the report names.
TEST(FaultsJobLog, AShortWriteLeavesNoHalfLineForTheNext) {
  Folder logs;
  const std::string log = logs.str() + "/jobs.jsonl";
  // A file size limit stands for a full disk: the write is cut short the same way.
  const test::ChildResult full = test::run_in_child([&](FILE* out) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{100, 100};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::fprintf(out, "%s",
                 append_to_log(log, {std::string(60, 'a'), std::string(60, 'b')}).c_str());
    return 0;
  });
  ASSERT_EQ(full.status, 0) << full.describe();
  EXPECT_NE(full.out.find(log + ": cannot append to the job log"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("1 of 2 lines written"), std::string::npos) << full.out;
  EXPECT_EQ(append_to_log(log, {"{\"next\":1}"}), "");
  std::istringstream text(read_all(log));
  std::vector<std::string> lines;
  for (std::string l; std::getline(text, l);) lines.push_back(l);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), std::string(60, 'a'));
  EXPECT_EQ(lines.back(), "{\"next\":1}") << read_all(log);
}

// A server that stops answering (NFS, hard-mounted) holds every writer in the kernel: the
// step's end must not wait for it longer than the writer's deadline.
TEST(FaultsJobLog, AFilesystemThatDoesNotAnswerDoesNotHoldTheStep) {
  Folder top;
  test::FrozenFilesystem frozen(top.path / "nfs");
  if (!frozen.ok()) GTEST_SKIP() << frozen.why_not();
  fs::create_directory(frozen.path() / "logs");
  const std::string log = job_log_file(frozen.path().string() + "/logs/", "n1");
  frozen.freeze(std::chrono::seconds(25));  // thawed at the latest then, or the test hangs
  const Appended a = append_in_child(log, {"{\"a\":1}"});
  frozen.thaw();
  EXPECT_FALSE(a.child.hung) << a.child.describe();
  EXPECT_LT(a.seconds, 20) << "the writer waited for the filesystem";
  EXPECT_NE(a.child.out.find("did not answer"), std::string::npos) << a.child.out;
}

// File or folder is the configuration's word (a trailing '/'), not a stat() at each step: a
// folder that is briefly unmounted must not turn into one file that every node appends to,
// and a folder named without the '/' is an error saying so, not silently one file per node.
TEST(FaultsJobLog, FileOrFolderIsDecidedByTheArgument) {
  Folder top;
  fs::create_directory(top.path / "logs");
  EXPECT_EQ(job_log_file(top.str() + "/logs", "n1"), top.str() + "/logs");
  const Appended a = append_in_child(job_log_file(top.str() + "/logs", "n1"), {"x"});
  EXPECT_NE(a.child.out.find("is a folder"), std::string::npos) << a.child.out;
  EXPECT_NE(a.child.out.find("job_log=" + top.str() + "/logs/"), std::string::npos) << a.child.out;
}

TEST(FaultsJobLog, ALogThatCannotBeWrittenIsOneLine) {
  Folder top;
  const std::string missing = top.str() + "/no/such/folder/jobs.jsonl";
  EXPECT_NE(append_to_log(missing, {"x"})
                .find(missing + ": cannot open the job log: " + top.str() + "/no: No such file"),
            std::string::npos);
  fs::create_symlink(top.path / "target", top.path / "link.jsonl");
  EXPECT_NE(append_to_log(top.str() + "/link.jsonl", {"x"}).find("cannot open"), std::string::npos);
  EXPECT_FALSE(fs::exists(top.path / "target"));  // not created through the link
  EXPECT_NE(append_to_log(top.str(), {"x"}).find("cannot open"), std::string::npos);
  EXPECT_NE(append_to_log("jobs.jsonl", {"x"}).find("must be an absolute file path"),
            std::string::npos);
}

// A job_log= folder (it ends with '/'): this node's own file in it, the folder made when
// missing (not the ones above it); an odd node name cannot leave the folder. A file stays
// itself.
TEST(FaultsJobLog, AJobLogFolderMeansOneFilePerNode) {
  Folder top;
  const std::string file = top.str() + "/jobs.jsonl";
  EXPECT_EQ(job_log_file(file, "n1"), file);
  const std::string folder = top.str() + "/logs/";
  EXPECT_EQ(job_log_file(folder, "n1"), folder + "n1.jsonl");
  EXPECT_FALSE(fs::exists(folder)) << "job_log_file looks at no filesystem";
  EXPECT_EQ(job_log_file(folder, "gpu-07.cluster"), folder + "gpu-07.cluster.jsonl");
  EXPECT_EQ(job_log_file(folder, "../etc/x"), folder + "_._etc_x.jsonl");
  EXPECT_EQ(job_log_file(folder, ""), folder + "unknown-node.jsonl");
  JobLogOptions make;
  make.make_folder = true;
  EXPECT_EQ(append_to_log(job_log_file(folder, "n2"), {"a", "b"}, make), "");
  EXPECT_EQ(read_all(folder + "n2.jsonl"), "a\nb\n");
  EXPECT_NE(append_to_log(job_log_file(top.str() + "/x/y/", "n2"), {"a"}, make)
                .find(top.str() + "/x: No such file"),
            std::string::npos);
}
