// Shards as GNU tar writes them, in its three formats (gnu, posix = pax, ustar): long names
// in each form, a file linked twice on disk stored as a hard link (tar's default without
// --hard-dereference), folders, and a symbolic link. Read by random access and streamed,
// plain and gzip-compressed: the same samples, the hard link's data its earlier member's.
// (ustar cannot store a link to a name past 100 bytes: there tar stores the data twice.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "error_text.hpp"
#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using test::ImageDir;

void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The long folder names make every member name pass tar's 100-byte name field (in two
// parts, so that ustar can split them into its prefix and name fields).
const std::string kLong =
    "a-first-folder-whose-name-is-long-enough-to-need-more-room/"
    "and-a-second-folder-inside-it-also-long";

// Files: three samples in a long-named folder; sample 2's image is a second name (a hard
// link on disk) of sample 0's image; a folder member; no symbolic link.
void write_tree(const std::string& root) {
  const std::string dir = root + "/" + kLong;
  write_text(dir + "/000000.jpg", "image zero");
  write_text(dir + "/000000.cls", "0");
  write_text(dir + "/000001.jpg", "image one");
  write_text(dir + "/000001.cls", "1");
  fs::create_hard_link(dir + "/000000.jpg", dir + "/000002.jpg");
  write_text(dir + "/000002.cls", "2");
}

std::string tar_shard(const std::string& root, const std::string& format, const std::string& name,
                      const std::string& flags = "") {
  const std::string out = root + "/" + name;
  // --sort=name: the members in name order, as WebDataset shards are written. ustar has no
  // room for a link's target past 100 bytes: its hard links are stored as files.
  const std::string deref = format == "ustar" ? " --hard-dereference" : "";
  const auto r = test::run_command("tar --format=" + format + deref + " --sort=name " + flags +
                                   " -C " + root + "/tree -cf " + out + " " + kLong + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  return out;
}

std::string text(const RawSample& s) {
  return {reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size()};
}

class GnuTarFormats : public ::testing::TestWithParam<const char*> {};

TEST_P(GnuTarFormats, LongNamesFoldersAndHardLinksReadAsTheirFiles) {
  ImageDir d;
  ::setenv("STOKER_CACHE_DIR", "none", 1);
  write_tree(d / "tree");
  const std::string plain = tar_shard(d.path(), GetParam(), "shard.tar");
  const std::string gz = tar_shard(d.path(), GetParam(), "shard.tar.gz", "-z");
  for (const auto& [shard, stream] : {std::pair{plain, false}, {plain, true}, {gz, true}}) {
    TarShardSource src({shard}, {.labels = true, .stream = stream});
    ASSERT_EQ(src.size(), 3u) << shard;
    std::vector<std::byte> scratch;
    const char* images[] = {"image zero", "image one", "image zero"};  // 2 links to 0
    for (uint64_t i = 0; i < 3; ++i) {
      const RawSample s = src.read(i, scratch);
      EXPECT_EQ(text(s), images[i]) << shard << " sample " << i << " stream " << stream;
      EXPECT_EQ(s.label, static_cast<int64_t>(i));
    }
    // Streaming through a cursor gives the same, in file order.
    if (stream) {
      auto cursor = src.open_shard(0);
      std::vector<std::byte> bytes;
      int64_t label = -1;
      for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(cursor->next(&bytes, label));
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                  images[i]);
      }
      EXPECT_FALSE(cursor->next(&bytes, label));
    }
  }
  ::unsetenv("STOKER_CACHE_DIR");
}

INSTANTIATE_TEST_SUITE_P(Formats, GnuTarFormats, ::testing::Values("gnu", "posix", "ustar"));

// Before: a hard-linked member (GNU tar's default for a file linked twice) was passed over
// as "not a file", so its sample vanished without a word.
TEST(FaultsTarMembers, AHardLinkedImageIsItsEarlierMembersDataNotDropped) {
  ImageDir d;
  write_tree(d / "tree");
  const std::string shard = tar_shard(d.path(), "gnu", "links.tar");
  EXPECT_EQ(TarShardSource({shard}).size(), 3u);
  // --hard-dereference stores the data twice: the same samples. (Not the same fingerprint:
  // that hashes a sample of the shard's bytes, and those differ.)
  const std::string deref = tar_shard(d.path(), "gnu", "deref.tar", "--hard-dereference");
  TarShardSource linked({shard}), copied({deref});
  ASSERT_EQ(copied.size(), 3u);
  std::vector<std::byte> a, b;
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(text(linked.read(i, a)), text(copied.read(i, b)));
}

TEST(FaultsTarMembers, ASymbolicLinkIsRefusedNamingTheMemberAndWhatToDo) {
  ImageDir d;
  write_tree(d / "tree");
  fs::create_symlink("000001.jpg", d / ("tree/" + kLong + "/000003.jpg"));
  write_text(d / ("tree/" + kLong + "/000003.cls"), "3");
  const std::string shard = tar_shard(d.path(), "posix", "symlink.tar");
  for (bool stream : {false, true}) {
    const std::string e =
        test::error_text([&] { TarShardSource({shard}, {.labels = true, .stream = stream}); });
    EXPECT_NE(e.find(shard + "@"), std::string::npos) << e;
    EXPECT_NE(e.find("000003.jpg' is a symbolic link (to '000001.jpg')"), std::string::npos) << e;
    EXPECT_NE(e.find("--dereference"), std::string::npos) << e;
  }
  // Stored dereferenced, the link is a file like the others.
  const std::string deref = tar_shard(d.path(), "posix", "deref.tar", "--dereference");
  EXPECT_EQ(TarShardSource({deref}).size(), 4u);
}

}  // namespace
}  // namespace stoker
