// Image folder and tar shard sources on real files in a temporary folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "image_fixtures.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker {
namespace {

using test::ImageDir;
using test::write_file;

std::string text(RawSample s) {
  return std::string(reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size());
}

TEST(ImageFolder, LabelsFollowSortedClassOrderAndFilesSortedPaths) {
  ImageDir d;
  // Created out of order; "b" has a nested folder; .jpg, .jpeg and .png in any case are
  // images, other files are ignored.
  write_file(d / "zebra/2.jpg", std::string("z2"));
  write_file(d / "ant/b.JPEG", std::string("ab"));
  write_file(d / "ant/a.jpg", std::string("aa"));
  write_file(d / "ant/notes.txt", std::string("x"));
  write_file(d / "ant/c.Png", std::string("ac"));
  write_file(d / "ant/d.gif", std::string("x"));
  write_file(d / "bee/sub/c.jpeg", std::string("bc"));
  write_file(d / "bee/sub/d.png", std::string("bd"));
  write_file(d / "loose.jpg", std::string("not in a class"));
  ImageFolderSource src(d.path());
  ASSERT_EQ(src.size(), 6u);
  EXPECT_EQ(src.classes(), (std::vector<std::string>{"ant", "bee", "zebra"}));
  std::vector<std::byte> scratch;
  const std::vector<std::pair<std::string, int64_t>> want = {{"aa", 0}, {"ab", 0}, {"ac", 0},
                                                             {"bc", 1}, {"bd", 1}, {"z2", 2}};
  for (uint64_t i = 0; i < want.size(); ++i) {
    RawSample s = src.read(i, scratch);
    EXPECT_EQ(text(s), want[i].first) << i;
    EXPECT_EQ(s.label, want[i].second) << i;
    EXPECT_EQ(src.label(i), want[i].second);
  }
  EXPECT_EQ(src.location(0), d / "ant/a.jpg");
  EXPECT_NE(src.describe().find("6 images in 3 classes"), std::string::npos);
}

TEST(ImageFolder, FingerprintDependsOnNamesAndSizesNotOnTheMountPoint) {
  ImageDir a, b;
  for (const ImageDir* d : {&a, &b}) {
    write_file(*d / "c0/x.jpg", std::string("1234"));
    write_file(*d / "c1/y.jpg", std::string("12"));
  }
  EXPECT_EQ(ImageFolderSource(a.path()).fingerprint(), ImageFolderSource(b.path()).fingerprint());
  write_file(b / "c1/y.jpg", std::string("123"));
  EXPECT_NE(ImageFolderSource(a.path()).fingerprint(), ImageFolderSource(b.path()).fingerprint());
}

TEST(ImageFolder, BadFoldersAreNamedErrors) {
  ImageDir d;
  auto expect_error = [](const std::string& root, const std::string& words) {
    try {
      ImageFolderSource src(root);
      ADD_FAILURE() << "no error for " << root;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(root), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(d / "missing", "no such folder");
  write_file(d / "file", std::string("x"));
  expect_error(d / "file", "not a folder");
  std::filesystem::create_directories(d / "empty");
  expect_error(d / "empty", "no class subfolders");
  write_file(d / "noimg/c/readme.txt", std::string("x"));
  expect_error(d / "noimg", "no images (.jpg/.jpeg/.png/.webp)");
}

// Each filesystem error gets its own cause's hint: a link loop in a class folder used to be
// told to "check the folder's permissions".
TEST(FaultsImageFolder, EachFilesystemErrorGetsItsOwnHint) {
  ImageDir d;
  auto error_of = [](const std::string& root) -> std::string {
    try {
      ImageFolderSource src(root);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  write_file(d / "loop/c/a.jpg", std::string("x"));
  std::filesystem::create_symlink("b", d / "loop/c/b");  // b -> b
  std::string e = error_of(d / "loop");
  EXPECT_NE(e.find("loop/c/b: cannot be read: Too many levels of symbolic links"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("a link loop"), std::string::npos) << e;
  EXPECT_EQ(e.find("permission"), std::string::npos) << e;
  // A root under a file: the path's own cause, not "no such folder".
  write_file(d / "file", std::string("x"));
  e = error_of(d / "file/sub");
  EXPECT_NE(e.find("Not a directory"), std::string::npos) << e;
  EXPECT_NE(e.find("a file stands where the path needs a folder"), std::string::npos) << e;
  // A name longer than NAME_MAX.
  e = error_of(d / std::string(300, 'n'));
  EXPECT_NE(e.find("shorten the path"), std::string::npos) << e;
  if (geteuid() != 0) {  // root enters any folder
    write_file(d / "closed/c/a.jpg", std::string("x"));
    chmod((d / "closed/c").c_str(), 0);
    e = error_of(d / "closed");
    chmod((d / "closed/c").c_str(), 0755);
    EXPECT_NE(e.find("check the permissions"), std::string::npos) << e;
  }
}

// The listing has no sizes (the walk stats no file): a file rewritten since is read
// as it is now (a cut image is then the decoder's error), and one removed is a SampleError.
TEST(ImageFolder, AFileThatVanishedIsASampleErrorAndOneRewrittenIsReadAsItIsNow) {
  ImageDir d;
  write_file(d / "c/a.jpg", std::string("abcdef"));
  write_file(d / "c/b.jpg", std::string("abcdef"));
  ImageFolderSource src(d.path());
  write_file(d / "c/a.jpg", std::string("abc"));
  std::filesystem::remove(d / "c/b.jpg");
  std::vector<std::byte> scratch;
  EXPECT_EQ(src.read(0, scratch).bytes.size(), 3u);
  try {
    src.read(1, scratch);
    FAIL() << "no error";
  } catch (const SampleError& e) {
    EXPECT_EQ(e.index, 1u);
    EXPECT_EQ(e.location, d / "c/b.jpg");
    EXPECT_NE(e.what.find("cannot open"), std::string::npos) << e.what;
  }
}

void write_tar(const std::string& path, test::TarWriter& w) {
  const std::vector<char> bytes = w.finish();
  write_file(path, bytes.data(), bytes.size());
}

TEST(TarShards, GroupsMembersByKeyAcrossShardsAndReadsLabels) {
  ImageDir d;
  test::TarWriter a, b;
  a.add("n01/000001.jpg", std::string("img1"));
  a.add("n01/000001.cls", std::string("7\n"));
  a.add("n01/000002.cls", std::string("3"));
  a.add("n01/000002.JPEG", std::string("img2"));
  a.add("n01/000003.json", std::string("{}"));  // no image: not a sample
  const std::string long_key(120, 'k');
  a.add("dir/" + long_key + ".jpg", std::string("img3"));  // GNU long name
  a.add("dir/" + long_key + ".cls2", std::string("4"));    // the label of a second kind
  b.add("x.y.jpg", std::string("img4"));                   // key "x", ext "y.jpg": not jpg
  b.add("z.jpg", std::string("img5"));
  b.add("z.cls", std::string("2"));
  write_tar(d / "shards/a.tar", a);
  write_tar(d / "shards/b.tar", b);
  write_file(d / "shards/readme.txt", std::string("ignored"));
  TarShardSource src({d / "shards"});
  ASSERT_EQ(src.size(), 4u);
  ASSERT_EQ(src.shards().size(), 2u);
  std::vector<std::byte> scratch;
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"img1", 7}, {"img2", 3}, {"img3", 4}, {"img5", 2}};
  for (uint64_t i = 0; i < want.size(); ++i) {
    RawSample s = src.read(i, scratch);
    EXPECT_EQ(text(s), want[i].first) << i;
    EXPECT_EQ(s.label, want[i].second) << i;
  }
  EXPECT_EQ(src.location(0), d / "shards/a.tar@512");
  // The same shards listed one by one: same samples, same fingerprint.
  TarShardSource same({d / "shards/a.tar", d / "shards/b.tar"});
  EXPECT_EQ(same.fingerprint(), src.fingerprint());
  EXPECT_NE(TarShardSource({d / "shards/a.tar"}).fingerprint(), src.fingerprint());
}

TEST(TarShards, TruncatedOrCorruptShardsNameTheShardAndOffset) {
  ImageDir d;
  test::TarWriter w;
  w.add("000001.jpg", std::string(3000, 'x'));
  w.add("000001.cls", std::string("1"));
  std::vector<char> bytes = w.finish();
  auto expect_error = [&](const std::string& path, const std::string& words) {
    try {
      TarShardSource src({path});
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + "@"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  // A cut shard is read up to its cut; the rest is one sample that reads as corrupt,
  // naming the shard and the byte where its data ends (tar_source_cut_test.cpp).
  auto expect_cut = [&](const std::string& path, uint64_t at) {
    TarShardSource src({path});
    ASSERT_EQ(src.size(), 1u);
    std::vector<std::byte> scratch;
    try {
      src.read(0, scratch);
      ADD_FAILURE() << "no error for " << path;
    } catch (const SampleError& e) {
      EXPECT_EQ(e.location, path + "@" + std::to_string(at));
      EXPECT_NE(e.what.find("truncated tar shard"), std::string::npos) << e.what;
    }
  };
  write_file(d / "cut.tar", bytes.data(), 2000);  // inside the first member's data
  expect_cut(d / "cut.tar", 2000);
  write_file(d / "cut-header.tar", bytes.data(), 512 * 7 + 100);  // inside the second header
  expect_cut(d / "cut-header.tar", 512 * 7 + 100);
  std::vector<char> bad = bytes;
  bad[10] ^= 1;
  write_file(d / "bad.tar", bad.data(), bad.size());
  expect_error(d / "bad.tar", "checksum");
  test::TarWriter l;
  l.add("1.jpg", std::string("x"));
  l.add("1.cls", std::string("seven"));
  std::vector<char> lb = l.finish();
  write_file(d / "label.tar", lb.data(), lb.size());
  expect_error(d / "label.tar", "not an integer");
  EXPECT_THROW(TarShardSource({d / "missing.tar"}), Error);
  EXPECT_THROW(TarShardSource(std::vector<std::string>{}), Error);
  std::filesystem::create_directories(d / "none");
  EXPECT_THROW(TarShardSource({d / "none"}), Error);
}

}  // namespace
}  // namespace stoker
