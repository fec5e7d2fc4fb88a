// Tar shards read as streams: .tar, .tar.gz and .tar.zst give the samples random access
// gives, in reads of 4 MiB; labels are required unless labels = false; the shard index
// cache is used and refreshed; corrupt and truncated shards are errors naming the shard.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "error_text.hpp"
#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker {
namespace {

using test::ImageDir;
using test::write_file;

// STOKER_CACHE_DIR for one test (the shard index cache stays out of $HOME).
class CacheDir {
 public:
  explicit CacheDir(const std::string& value) { ::setenv("STOKER_CACHE_DIR", value.c_str(), 1); }
  ~CacheDir() { ::unsetenv("STOKER_CACHE_DIR"); }
};

std::string text(const RawSample& s) {
  return {reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size()};
}

// `n` samples k0000i.jpg of `bytes` bytes ("image i" and filler) with label i % 10.
std::vector<char> shard_bytes(int n, size_t bytes) {
  test::TarWriter w;
  for (int i = 0; i < n; ++i) {
    const std::string key = "k" + std::to_string(10000 + i);
    std::string image = "image " + std::to_string(i);
    image.resize(std::max(bytes, image.size()), 'x');
    w.add(key + ".jpg", image);
    w.add(key + ".cls", std::to_string(i % 10));
  }
  return w.finish();
}

TEST(TarStream, PlainGzipAndZstdShardsStreamWhatRandomAccessReads) {
  ImageDir d;
  CacheDir cache("none");
  const std::vector<char> tar = shard_bytes(30, 3000);
  write_file(d / "a.tar", tar.data(), tar.size());
  const auto gz = test::gzip_bytes(tar), zst = test::zstd_bytes(tar);
  write_file(d / "a.tar.gz", gz.data(), gz.size());
  write_file(d / "a.tar.zst", zst.data(), zst.size());
  const TarShardSource random({d / "a.tar"});
  std::vector<std::byte> want, got;
  for (const std::string name : {"a.tar", "a.tar.gz", "a.tar.zst"}) {
    SCOPED_TRACE(name);
    const TarShardSource streamed({d / name}, {.labels = true, .stream = true});
    ASSERT_TRUE(streamed.streamed());
    ASSERT_EQ(streamed.size(), 30u);
    EXPECT_EQ(streamed.shard_samples(), std::vector<uint64_t>{30});
    // The same files give the same fingerprint either way; a compressed copy is other
    // files (their content sample is of the compressed bytes: content_sample.hpp).
    if (name == "a.tar") {
      EXPECT_EQ(streamed.fingerprint(), random.fingerprint());
    }
    auto cursor = streamed.open_shard(0);
    int64_t label = -1;
    for (uint64_t i = 0; i < 30; ++i) {
      const RawSample r = random.read(i, want);
      ASSERT_TRUE(cursor->next(&got, label));
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data()), got.size()), text(r));
      EXPECT_EQ(label, r.label);
      EXPECT_EQ(text(streamed.read(i, got)), text(r)) << "read() by index, in file order";
    }
    EXPECT_FALSE(cursor->next(&got, label));
    EXPECT_EQ(streamed.location(4), d / name + "#4");
  }
}

TEST(TarStream, ShardsAreReadInLargeSequentialReads) {
  ImageDir d;
  CacheDir cache("none");
  const std::vector<char> tar = shard_bytes(40, 300 << 10);  // ~12 MiB
  write_file(d / "big.tar", tar.data(), tar.size());
  const TarShardSource src({d / "big.tar"}, {.labels = true, .stream = true});
  auto cursor = src.open_shard(0);
  int64_t label = 0;
  std::vector<std::byte> bytes;
  while (cursor->next(&bytes, label)) {
  }
  const ReadCounters c = cursor->counters();
  EXPECT_EQ(c.largest, 4u << 20);
  EXPECT_LE(c.reads, tar.size() / (4u << 20) + 1);  // every read but the last is 4 MiB
  EXPECT_GE(c.bytes, tar.size() - 1024);            // the end-of-archive blocks may stay unread
}

TEST(TarStream, LabelsComeFromClsThenCls2ThenTxtAndImagesAreJpgJpegOrPng) {
  ImageDir d;
  CacheDir cache("none");
  test::TarWriter w;
  w.add("a.JPEG", std::string("A"));
  w.add("a.txt", std::string("a cat on a mat"));  // a caption: not used, .cls wins
  w.add("a.cls", std::string(" 3\n"));
  w.add("b.png", std::string("B"));
  w.add("b.txt", std::string("8"));
  w.add("c.jpg", std::string("C"));
  w.add("c.cls2", std::string("2147483647"));
  const auto tar = w.finish();
  write_file(d / "s.tar", tar.data(), tar.size());
  for (bool stream : {false, true}) {
    const TarShardSource src({d / "s.tar"}, {.labels = true, .stream = stream});
    std::vector<std::byte> scratch;
    ASSERT_EQ(src.size(), 3u);
    EXPECT_EQ(src.read(0, scratch).label, 3);
    EXPECT_EQ(src.read(1, scratch).label, 8);
    EXPECT_EQ(text(src.read(1, scratch)), "B");
    EXPECT_EQ(src.read(2, scratch).label, 2147483647);
  }
}

// A one-sample shard whose label member is `label` (none when empty).
std::string label_shard(const ImageDir& d, const std::string& name, const std::string& label) {
  test::TarWriter w;
  w.add("n01/k1.jpg", std::string("image"));
  if (!label.empty()) w.add("n01/k1.cls", label);
  const auto tar = w.finish();
  write_file(d / name, tar.data(), tar.size());
  return d / name;
}

TEST(FaultsTarLabels, AMissingOrOutOfRangeLabelNamesTheShardAndMember) {
  ImageDir d;
  CacheDir cache("none");
  for (bool stream : {false, true}) {
    const std::string none = label_shard(d, "none.tar", "");
    std::string e =
        test::error_text([&] { TarShardSource({none}, {.labels = true, .stream = stream}); });
    EXPECT_NE(e.find(none + "@"), std::string::npos) << e;
    EXPECT_NE(e.find("'n01/k1.jpg') has no label member"), std::string::npos) << e;
    EXPECT_NE(e.find("labels=false"), std::string::npos) << e;
    for (const std::string bad : {"-1", "5000000000", "2147483648"}) {
      const std::string path = label_shard(d, "bad.tar", bad);
      e = test::error_text([&] { TarShardSource({path}, {.labels = true, .stream = stream}); });
      EXPECT_NE(e.find(path + "@"), std::string::npos) << e;
      EXPECT_NE(e.find("label member 'n01/k1.cls' holds " + bad + ", outside 0..2147483647"),
                std::string::npos)
          << e;
    }
    // labels = false: label-free shards are read, every label -1 (label members ignored).
    std::vector<std::byte> scratch;
    EXPECT_EQ(TarShardSource({none}, {.labels = false, .stream = stream}).read(0, scratch).label,
              -1);
    const std::string odd = label_shard(d, "odd.tar", "-7");
    EXPECT_EQ(TarShardSource({odd}, {.labels = false, .stream = stream}).read(0, scratch).label,
              -1);
  }
}

TEST(FaultsTarStream, TruncatedOrCorruptCompressedShardsNameTheShard) {
  ImageDir d;
  CacheDir cache("none");
  const std::vector<char> tar = shard_bytes(20, 5000);
  auto expect = [&](const std::string& name, const std::vector<char>& bytes,
                    const std::string& words) {
    write_file(d / name, bytes.data(), bytes.size());
    const std::string e =
        test::error_text([&] { TarShardSource({d / name}, {.labels = true, .stream = true}); });
    EXPECT_NE(e.find(d / name + (bytes.empty() ? ":" : "@")), std::string::npos) << e;
    EXPECT_NE(e.find(words), std::string::npos) << e;
  };
  auto zst = test::zstd_bytes(tar);
  // zlib finds the damage (a bad code, or the CRC at the end) before it hands out the window
  // holding it: a shard within one window (128 KiB). In a larger one the tar reader may meet
  // the garbage first, as "bad tar header checksum" naming the shard and the offset.
  auto gz = test::gzip_bytes(shard_bytes(8, 5000));
  gz[gz.size() / 2] ^= 0x55;
  expect("bad.tar.gz", gz, "corrupt gzip data");
  std::vector<char> bad_tar = tar;
  bad_tar[512 + 5120 + 10] ^= 1;  // the second member's header (after 5000 bytes, padded)
  expect("bad.tar", bad_tar, "bad tar header checksum");
  expect("empty.tar", {}, "is empty");
  // Compressed shards opened for random access: named, with the way to read them.
  const auto whole = test::gzip_bytes(tar);
  write_file(d / "a.tar.gz", whole.data(), whole.size());
  const std::string e = test::error_text([&] { TarShardSource({d / "a.tar.gz"}); });
  EXPECT_NE(e.find(d / "a.tar.gz: is a gzip-compressed tar shard: it cannot be read by random "
                       "access (stream it"),
            std::string::npos)
      << e;
}

// `stoker bench images x.tar.gz` once said "is not a folder"; `bench tokens DIR` "no such
// file". Both are inputs now; what is neither says what it is.
TEST(FaultsBenchInputs, ShardsAndTokenFoldersAreBenchedAndOtherFilesSayWhatTheyAre) {
  ImageDir d;
  test::TarWriter w;
  for (int i = 0; i < 4; ++i) w.add(std::to_string(i) + ".jpg", test::test_jpeg(24, 16, i));
  const auto gz = test::gzip_bytes(w.finish());
  write_file(d / "x.tar.gz", gz.data(), gz.size());
  const std::string bench = test::stoker_cli() + " bench ";
  auto r = test::run_command("STOKER_CACHE_DIR=none " + bench + "images " + d / "x.tar.gz" +
                             " --no-labels --batch-size 2 --epochs 1 --size 8 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("4 image samples, 0 MiB, streamed, no labels"), std::string::npos) << r.out;
  r = test::run_command("STOKER_CACHE_DIR=none " + bench + "images " + d / "x.tar.gz" + " 2>&1");
  EXPECT_NE(r.out.find("x.tar.gz@512: sample '0' (member '0.jpg') has no label member"),
            std::string::npos)
      << r.out;
  write_file(d / "photo.jpg", test::test_jpeg(16, 16, 1));
  r = test::run_command(bench + "images " + d / "photo.jpg" + " 2>&1");
  EXPECT_NE(r.out.find("photo.jpg@0: bad tar header checksum (corrupt or not a tar file)"),
            std::string::npos)
      << r.out;
  std::vector<uint16_t> tokens(300, 7);
  write_file(d / "tok/a.bin", tokens.data(), tokens.size() * 2);
  write_file(d / "tok/b.bin", tokens.data(), tokens.size() * 2);
  r = test::run_command(bench + "tokens " + d / "tok" + " --seq-len 16 --epochs 1 --json 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("token set of 2 files"), std::string::npos) << r.out;
}

TEST(TarStream, TheIndexCacheSkipsTheCountingPassUntilTheShardChanges) {
  ImageDir d;
  CacheDir cache(d / "cache");
  const std::vector<char> tar = shard_bytes(12, 1000);
  write_file(d / "s.tar", tar.data(), tar.size());
  const TarShardOptions o{.labels = true, .stream = true};
  EXPECT_EQ(TarShardSource({d / "s.tar"}, o).size(), 12u);
  // The user's own part of the cache (cache_dir.hpp).
  const std::string shards = d / ("cache/" + std::to_string(::geteuid()) + "/shards");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(shards),
                          std::filesystem::directory_iterator()),
            1);
  // Break a header in place, keeping size and time: the cache still answers, unread.
  struct stat st {};
  ASSERT_EQ(::stat((d / "s.tar").c_str(), &st), 0);
  std::vector<char> broken = tar;
  broken[512 + 1024 + 10] ^= 1;  // the second member's header
  write_file(d / "s.tar", broken.data(), broken.size());
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (d / "s.tar").c_str(), times, 0), 0);
  EXPECT_EQ(TarShardSource({d / "s.tar"}, o).size(), 12u);
  {
    CacheDir off("none");
    EXPECT_NE(test::error_text([&] { TarShardSource({d / "s.tar"}, o); }).find("checksum"),
              std::string::npos);
  }
  // A shard rewritten with other contents is counted again.
  ::setenv("STOKER_CACHE_DIR", (d / "cache").c_str(), 1);
  const std::vector<char> more = shard_bytes(15, 1000);
  write_file(d / "s.tar", more.data(), more.size());
  EXPECT_EQ(TarShardSource({d / "s.tar"}, o).size(), 15u);
}

TEST(TarStream, FoldersListEveryShardKindAndNamedErrorsSayWhatTheInputIs) {
  ImageDir d;
  CacheDir cache("none");
  const std::vector<char> tar = shard_bytes(3, 100);
  const auto gz = test::gzip_bytes(tar), zst = test::zstd_bytes(tar);
  write_file(d / "s/b.tar", tar.data(), tar.size());
  write_file(d / "s/a.tar.gz", gz.data(), gz.size());
  write_file(d / "s/c.TAR.ZST", zst.data(), zst.size());
  write_file(d / "s/notes.txt", std::string("not a shard"));
  EXPECT_EQ(list_tar_shards({d / "s"}),
            (std::vector<std::string>{d / "s/a.tar.gz", d / "s/b.tar", d / "s/c.TAR.ZST"}));
  EXPECT_EQ(TarShardSource({d / "s"}, {.labels = true, .stream = true}).size(), 9u);
  std::filesystem::create_directories(d / "empty");
  EXPECT_NE(
      test::error_text([&] { list_tar_shards({d / "empty"}); }).find("folder without tar shards"),
      std::string::npos);
  EXPECT_NE(
      test::error_text([&] { list_tar_shards({d / "nope.tar.gz"}); }).find("no such tar shard"),
      std::string::npos);
}

// A link to itself named like a shard stopped the listing with a bare std::filesystem_error,
// as in a token folder (loader.FaultsTokenSet.ALinkToItselfInAFolderIsAnErrorNamingIt): both
// list their folder with folder_files now. A link to itself named otherwise is no shard.
TEST(FaultsTarStream, ALinkToItselfInAShardFolderIsAnErrorNamingIt) {
  ImageDir d;
  const std::vector<char> tar = shard_bytes(3, 100);
  write_file(d / "s/a.tar", tar.data(), tar.size());
  std::filesystem::create_symlink("notes.txt", d / "s/notes.txt");
  EXPECT_EQ(list_tar_shards({d / "s"}), std::vector<std::string>{d / "s/a.tar"});
  std::filesystem::create_symlink("loop.tar", d / "s/loop.tar");
  EXPECT_NE(test::error_text([&] {
              list_tar_shards({d / "s"});
            }).find(d / "s/loop.tar" + ": cannot be read: Too many levels of symbolic links"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker
