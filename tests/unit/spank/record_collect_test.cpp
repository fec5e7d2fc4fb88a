// The collector on real files as root would meet them: records that are fine, missing,
// empty, truncated, huge, symbolic links, FIFOs, another user's, hard links, or naming
// another job; a record folder that is a link, left full, or left by an earlier step.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "job_log.hpp"
#include "record_collect.hpp"
#include "stoker/common/error.hpp"

using namespace stoker;
using namespace stoker::spank;
namespace fs = std::filesystem;

namespace {

struct Root {
  fs::path path;
  Root() {
    path = fs::path(::testing::TempDir()) /
           ("stoker_records_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
    fs::permissions(path, fs::perms(0755));
  }
  ~Root() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string str() const { return path.string(); }
};

StepIdentity who() {
  return {"2026-12-02T16:00:00Z", "77", "0", "n1", "alice", "gpu", ::geteuid()};
}

RunRecord record(uint64_t rank) {
  RunRecord r;
  r.job = "77";
  r.step = "0";
  r.node = "n1";
  r.rank = rank;
  r.plan.profile = "cv";
  r.wait_share = 0.4;
  r.end = "close";
  return r;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::trunc) << text;
}

std::string read_all(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST(RecordCollect, ReadsEachRanksRecordAndLogsOneLineEach) {
  EXPECT_EQ(step_folder_name(77, 0, 1), "77.0.1");  // a shared root keeps nodes apart
  Root root;
  const std::string folder = make_step_folder(root.str(), "77.0", ::geteuid(), ::getegid());
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms(0700));
  write(fs::path(folder) / "rank-0.json", to_json(record(0)) + "\n");
  write(fs::path(folder) / "rank-1.json", to_json(record(1)));
  const auto lines = collect_records(root.str(), "77.0", {0, 1, 2}, who());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].status, "ok");
  EXPECT_EQ(lines[0].record, record(0));
  EXPECT_EQ(lines[1].status, "ok");
  EXPECT_EQ(lines[2].status, "missing");
  EXPECT_EQ(
      lines[2].problem,
      folder + "/rank-2.json: no record (the rank made no stoker loader, or was killed first)");

  const std::string log = root.str() + "/jobs.jsonl";
  std::vector<std::string> text;
  for (const auto& l : lines) text.push_back(to_json(l));
  EXPECT_EQ(append_to_log(log, text), "");
  EXPECT_EQ(append_to_log(log, text), "");  // appends
  std::istringstream in(read_all(log));
  int n = 0;
  for (std::string line; std::getline(in, line); ++n)
    EXPECT_EQ(parse_job_log_line(line, "log").rank, static_cast<uint64_t>(n % 3));
  EXPECT_EQ(n, 6);

  EXPECT_EQ(remove_step_folder(root.str(), "77.0"), "");
  EXPECT_FALSE(fs::exists(folder));
}

TEST(FaultsRecordCollect, BadRecordsAreLinesSayingSoNeverReadThroughALink) {
  Root root;
  const std::string folder = make_step_folder(root.str(), "77.0", ::geteuid(), ::getegid());
  const fs::path f(folder);
  write(root.path / "secret", to_json(record(0)));  // a file the user could not read
  fs::create_symlink(root.path / "secret", f / "rank-0.json");
  write(f / "rank-1.json", "");                                      // empty
  write(f / "rank-2.json", to_json(record(2)).substr(0, 40));        // truncated
  write(f / "rank-3.json", std::string(kMaxRecordBytes + 10, ' '));  // huge
  ASSERT_EQ(::mkfifo((f / "rank-4.json").c_str(), 0600), 0);         // would block a reader
  write(f / "rank-5.json", to_json(record(0)));                      // names another rank
  fs::create_hard_link(root.path / "secret", f / "rank-6.json");     // a hard link
  const auto lines = collect_records(root.str(), "77.0", {0, 1, 2, 3, 4, 5, 6}, who());
  const char* expected[] = {"symbolic link",     "is empty",           "not valid JSON",
                            "larger than 16384", "not a regular file", "not this step's rank",
                            "other hard links"};
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].status, "bad") << i;
    EXPECT_FALSE(lines[i].record.has_value()) << i;
    EXPECT_NE(lines[i].problem.find(folder + "/rank-" + std::to_string(i) + ".json"),
              std::string::npos)
        << lines[i].problem;
    EXPECT_NE(lines[i].problem.find(expected[i]), std::string::npos) << lines[i].problem;
    EXPECT_LT(to_json(lines[i]).size(), 4096u);
  }
}

TEST(FaultsRecordCollect, ARecordOfAnotherUserIsNotRead) {
  Root root;
  const std::string folder = make_step_folder(root.str(), "77.0", ::geteuid(), ::getegid());
  write(fs::path(folder) / "rank-0.json", to_json(record(0)));
  StepIdentity other = who();
  other.uid = ::geteuid() + 12345;
  const auto lines = collect_records(root.str(), "77.0", {0}, other);
  EXPECT_EQ(lines[0].status, "bad");
  EXPECT_NE(lines[0].problem.find("not the job user's"), std::string::npos);
}

// pyxis's --container-image and --container-mounts, as the stepd read them: a rank in a
// container whose mounts do not reach the record folder most likely could not write there
// (a fresh /run inside); the line says so before "made no loader".
TEST(RecordCollect, AMissingRecordOfAContainerizedRankNamesTheMissingMount) {
  Root root;
  const std::string folder = make_step_folder(root.str(), "77.0.0", ::geteuid(), ::getegid());
  StepIdentity in_container = who();
  in_container.container_image = "nvcr.io#nvidia/pytorch:25.01-py3";
  in_container.container_mounts = "/data:/data:ro";
  auto lines = collect_records(root.str(), "77.0.0", {0}, in_container);
  EXPECT_EQ(lines[0].status, "missing");
  EXPECT_EQ(lines[0].problem,
            folder +
                "/rank-0.json: no record (the rank ran in a container (--container-image) "
                "without the record folder: mount it at its own path, --container-mounts=" +
                root.str() +
                " or the site's enroot mounts.d, see the user guide's Containers; or it made no "
                "stoker loader, or was killed first)");
  EXPECT_EQ(lines[0].problem.find("the rank made no stoker loader"), std::string::npos);
  // The root mounted at its own path: the folder was there, so the usual cause.
  in_container.container_mounts = "/data:/data:ro," + root.str() + ":" + root.str();
  lines = collect_records(root.str(), "77.0.0", {0}, in_container);
  EXPECT_NE(lines[0].problem.find(": no record (the rank made no stoker loader"), std::string::npos)
      << lines[0].problem;
  EXPECT_EQ(remove_step_folder(root.str(), "77.0.0"), "");
}

TEST(RecordCollect, ContainerMountsReachAFolderAtItsOwnPathOnly) {
  const std::string dir = "/run/stoker/records/77.0.0";
  EXPECT_TRUE(mounts_reach("/run/stoker/records", dir));
  EXPECT_TRUE(mounts_reach("/run/stoker/records/:/run/stoker/records/", dir));
  EXPECT_TRUE(mounts_reach("/data:/data:ro,/run/stoker:/run/stoker:rw", dir));
  EXPECT_TRUE(mounts_reach("/run", dir));
  EXPECT_TRUE(mounts_reach(dir, dir));
  EXPECT_FALSE(mounts_reach("", dir));
  EXPECT_FALSE(mounts_reach("/run/stoker/records:/records", dir));  // elsewhere inside
  EXPECT_FALSE(mounts_reach("/run/stoker/rec", dir));               // a name's prefix only
  EXPECT_FALSE(mounts_reach("/data,/scratch:/scratch", dir));
  EXPECT_FALSE(mounts_reach(",,", dir));
}

TEST(FaultsRecordCollect, AStepFolderReplacedByALinkIsNotFollowed) {
  Root root;
  fs::create_directories(root.path / "elsewhere");
  write(root.path / "elsewhere" / "rank-0.json", to_json(record(0)));
  fs::create_directory_symlink(root.path / "elsewhere", root.path / "77.0");
  const auto lines = collect_records(root.str(), "77.0", {0}, who());
  EXPECT_EQ(lines[0].status, "missing");
  EXPECT_NE(lines[0].problem.find("record folder is gone"), std::string::npos);
  EXPECT_EQ(remove_step_folder(root.str(), "77.0"), "");
  EXPECT_TRUE(fs::exists(root.path / "elsewhere" / "rank-0.json"));  // not removed through it
}

TEST(FaultsRecordCollect, ARootOthersMayWriteIsRefused) {
  Root root;
  fs::permissions(root.path, fs::perms(0777));
  try {
    make_step_folder(root.str(), "77.0", ::geteuid(), ::getegid());
    FAIL() << "a world-writable root was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writable by others"), std::string::npos) << e.what();
  }
}

// A rank killed mid-write leaves its writer's temporary (rank-N.json.tmp.<pid>.<n>, now
// .tmp.XXXXXX), and a user may leave anything in their step's folder; the folder then stayed in
// RAM-backed /run until reboot. Everything is removed, without following a link anywhere.
TEST(FaultsRecordCollect, EverythingAStepLeftIsRemovedWithoutFollowingLinks) {
  Root root;
  const std::string folder = make_step_folder(root.str(), "77.0", ::geteuid(), ::getegid());
  const fs::path f(folder);
  fs::create_directories(root.path / "outside" / "inner");
  write(root.path / "outside" / "keep", "kept");
  write(root.path / "outside" / "inner" / "keep", "kept");
  write(f / "rank-0.json", to_json(record(0)));
  write(f / "rank-1.json.tmp.4711.3", "{\"half");
  write(f / "notes.txt", "a user's file");
  fs::create_directories(f / "sub" / "deeper");
  write(f / "sub" / "deeper" / "file", "x");
  fs::create_symlink(root.path / "outside" / "keep", f / "link");
  fs::create_directory_symlink(root.path / "outside", f / "dirlink");
  fs::create_directory_symlink(root.path / "outside", f / "sub" / "dirlink");
  ASSERT_EQ(::mkfifo((f / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(remove_step_folder(root.str(), "77.0"), "");
  EXPECT_FALSE(fs::exists(f)) << "the step's folder was left";
  EXPECT_EQ(read_all((root.path / "outside" / "keep").string()), "kept");
  EXPECT_EQ(read_all((root.path / "outside" / "inner" / "keep").string()), "kept");
}

// A folder of an earlier step of the same ids (a job id used again, a requeued job) was chowned
// to the new user with the old user's files inside, a planted link among them. Never reused:
// the new step's folder is a fresh, empty one of its own user.
TEST(FaultsRecordCollect, AnEarlierFolderIsNeverReusedForAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the folders belong to two users";
  Root root;
  const std::string old = make_step_folder(root.str(), "77.0.0", 4242, 4242);
  write(root.path / "victim", "the new user's");
  write(fs::path(old) / "rank-0.json", "{}");
  fs::create_symlink(root.path / "victim", fs::path(old) / "rank-1.json");
  const std::string fresh = make_step_folder(root.str(), "77.0.0", 4343, 4343);
  EXPECT_EQ(fresh, old);
  EXPECT_TRUE(fs::is_empty(fresh)) << "the earlier step's files are still there";
  struct stat st {};
  ASSERT_EQ(::lstat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4343u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(read_all((root.path / "victim").string()), "the new user's");
}
