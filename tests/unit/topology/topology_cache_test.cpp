// The plugin's topology cache (load_topology_cached) on this machine's real hwloc: cold
// discovery writes it, a warm load reads it, and every way a cache can be stale, broken or
// planted by someone else than root makes it rediscover instead of trusting it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stoker/common/strings.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"
#include "temp_tree.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void overwrite(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The names in `dir`, sorted.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Ownership checks need root: the cache is root's, and tests chown files to nobody.
class TopologyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the topology cache is written by root only";
    dir_ = tree_.path("cache");
  }
  // A cold load that writes the cache; returns its path.
  std::string warm_up(bool with_io = true) {
    const CachedTopology c = load_topology_cached(dir_, with_io);
    EXPECT_FALSE(c.from_cache);
    EXPECT_TRUE(c.written) << c.note;
    return c.path;
  }
  // Loads, expects the cache not to be read for `why`, rewritten, and read the next time.
  void expect_rediscovered(const std::string& why) {
    const CachedTopology c = load_topology_cached(dir_, true);
    EXPECT_FALSE(c.from_cache);
    EXPECT_TRUE(contains(c.note, why)) << c.note;
    EXPECT_TRUE(c.written) << c.note;
    EXPECT_TRUE(load_topology_cached(dir_, true).from_cache);
  }
  test::TempTree tree_;
  std::string dir_;
};

TEST_F(TopologyCacheTest, KeyIsTheBootIdAndTheHwlocRelease) {
  const std::string boot_id = *read_first_line("/proc/sys/kernel/random/boot_id");
  const std::string key = topology_cache_key(true);
  EXPECT_EQ(key.rfind(boot_id + "-hwloc2.", 0), 0u) << key;
  EXPECT_EQ(topology_cache_key(false), key + "-noio");
}

TEST_F(TopologyCacheTest, ColdDiscoveryWritesARootOwnedFileThatTheNextLoadReads) {
  const CachedTopology cold = load_topology_cached(dir_, true);
  EXPECT_FALSE(cold.from_cache);
  ASSERT_TRUE(cold.written) << cold.note;
  EXPECT_EQ(cold.path, dir_ + "/topology-" + topology_cache_key(true) + ".xml");
  EXPECT_EQ(cold.note, "not read: folder " + dir_ + " is absent");
  const struct stat file = stat_of(cold.path), folder = stat_of(dir_);
  EXPECT_EQ(file.st_uid, 0u);
  EXPECT_EQ(file.st_mode & 07777, 0644u);
  EXPECT_EQ(folder.st_mode & 07777, 0755u);  // created by the cache

  const CachedTopology warm = load_topology_cached(dir_, true);
  EXPECT_TRUE(warm.from_cache) << warm.note;
  EXPECT_FALSE(warm.written);
  const Topology &a = cold.topology, &b = warm.topology;
  EXPECT_TRUE(b.is_this_system);  // binding works through the cache
  EXPECT_EQ(b.source, "this machine");
  EXPECT_EQ(b.all_cpus, a.all_cpus);
  EXPECT_EQ(b.allowed_cpus, a.allowed_cpus);
  EXPECT_EQ(b.cores.size(), a.cores.size());
  EXPECT_EQ(b.numa_nodes.size(), a.numa_nodes.size());
  EXPECT_EQ(b.total_memory, a.total_memory);
  EXPECT_EQ(b.gpus.size(), a.gpus.size());
  ASSERT_EQ(b.nics.size(), a.nics.size());
  for (size_t i = 0; i < a.nics.size(); ++i) EXPECT_EQ(b.nics[i].name, a.nics[i].name);
  EXPECT_TRUE(bind_this_process(b, current_cpu_mask(), {}, MemBind::None).cpus_bound);
}

TEST_F(TopologyCacheTest, AStepWithoutGpusHasItsOwnCacheWithoutDevices) {
  const std::string path = warm_up(false);
  EXPECT_TRUE(path.ends_with("-noio.xml")) << path;
  const CachedTopology warm = load_topology_cached(dir_, false);
  EXPECT_TRUE(warm.from_cache) << warm.note;
  EXPECT_TRUE(warm.topology.gpus.empty());
  EXPECT_TRUE(warm.topology.nics.empty());
  EXPECT_FALSE(warm.topology.cores.empty());
  EXPECT_FALSE(load_topology_cached(dir_, true).from_cache);  // the I/O one is another file
}

class FaultsTopologyCache : public TopologyCacheTest {};

TEST_F(FaultsTopologyCache, AnotherHwlocReleaseInTheXmlIsRediscovered) {
  // The same file name, but written by another hwloc (an upgrade without reboot).
  const std::string path = warm_up();
  overwrite(path, replaced(slurp(path), "name=\"hwlocVersion\" value=\"2.",
                           "name=\"hwlocVersion\" value=\"1."));
  expect_rediscovered("and hwloc 1.");
}

TEST_F(FaultsTopologyCache, AnotherBootsCacheUnderThisNameIsRediscovered) {
  const std::string path = warm_up();
  // A boot id is 36 characters; keep the hwloc part of the key.
  const std::string key = topology_cache_key(true);
  const std::string other = "00000000-0000-0000-0000-000000000000" + key.substr(36);
  overwrite(path, replaced(slurp(path), key, other));
  expect_rediscovered("records key '" + other + "'");
}

TEST_F(FaultsTopologyCache, AFileWritableByOthersIsNotReadAndIsReplaced) {
  const std::string path = warm_up();
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  expect_rediscovered("is writable by others than root (mode 0666)");
  EXPECT_EQ(stat_of(path).st_mode & 07777, 0644u);
}

TEST_F(FaultsTopologyCache, AFileNotOwnedByRootIsNotReadAndIsReplaced) {
  const std::string path = warm_up();
  ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  expect_rediscovered("is owned by uid 65534, not root");
  EXPECT_EQ(stat_of(path).st_uid, 0u);
}

TEST_F(FaultsTopologyCache, ASymbolicLinkIsNotFollowed) {
  const std::string path = warm_up();
  const std::string elsewhere = tree_.path("elsewhere.xml");
  fs::rename(path, elsewhere);
  fs::create_symlink(elsewhere, path);
  expect_rediscovered(path + ": ");
  EXPECT_FALSE(fs::is_symlink(path));
}

TEST_F(FaultsTopologyCache, AFolderWritableByOthersIsNeitherReadNorWritten) {
  const std::string path = warm_up();
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // like /tmp
  CachedTopology c = load_topology_cached(dir_, true);
  EXPECT_FALSE(c.from_cache);
  EXPECT_FALSE(c.written);
  EXPECT_TRUE(contains(c.note, "is writable by others than root (mode 1777)")) << c.note;
  EXPECT_FALSE(c.topology.cores.empty());  // discovered all the same
}

TEST_F(FaultsTopologyCache, AFolderNotOwnedByRootIsNeitherReadNorWritten) {
  warm_up();
  ASSERT_EQ(::chown(dir_.c_str(), kNobody, kNobody), 0);
  CachedTopology c = load_topology_cached(dir_, true);
  EXPECT_FALSE(c.from_cache);
  EXPECT_FALSE(c.written);
  EXPECT_TRUE(contains(c.note, "folder " + dir_ + " is owned by uid 65534")) << c.note;
}

TEST_F(FaultsTopologyCache, ATruncatedCacheIsIgnoredAndRewritten) {
  const std::string path = warm_up();
  const std::string xml = slurp(path);
  overwrite(path, xml.substr(0, xml.size() / 2));
  expect_rediscovered("is not a valid hwloc XML topology");
}

TEST_F(FaultsTopologyCache, GarbageOrAnEmptyFileIsIgnoredAndRewritten) {
  const std::string path = warm_up();
  overwrite(path, "\x01\x02 not xml at all <topology");
  expect_rediscovered("is not a valid hwloc XML topology");
  overwrite(path, "");
  expect_rediscovered("is not a valid hwloc XML topology");
}

TEST_F(FaultsTopologyCache, WritingLeavesNoTemporaryFiles) {
  warm_up(true);
  warm_up(false);
  ASSERT_EQ(::chmod((dir_ + "/topology-" + topology_cache_key(true) + ".xml").c_str(), 0666), 0);
  load_topology_cached(dir_, true);  // a third write, over an existing file
  std::vector<std::string> want{"topology-" + topology_cache_key(true) + ".xml",
                                "topology-" + topology_cache_key(false) + ".xml"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names_in(dir_), want);
}

TEST_F(FaultsTopologyCache, OnlyRootWritesTheCache) {
  // A child that gave up root discovers but never writes: the file could not be root's.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setresuid(kNobody, kNobody, kNobody) != 0) ::_exit(2);
    const CachedTopology c = load_topology_cached(dir_, true);
    ::_exit(!c.written && contains(c.note, "only root writes the cache") &&
                    !c.topology.cores.empty()
                ? 0
                : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(fs::exists(dir_));
}

}  // namespace
}  // namespace stoker
