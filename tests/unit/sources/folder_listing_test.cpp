// The image folder's listing cache (src/sources/folder_listing.hpp): a cached listing is the
// walk's, byte for byte; any added, removed or renamed file or class makes it unused; writers
// at once leave a whole entry; a cache that cannot be written is one line, and listing goes on.
#include "sources/folder_listing.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <unistd.h>

#include "image_fixtures.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using test::ImageDir;
using test::write_file;

// A dataset (two classes, one with a nested folder) and a cache folder of its own.
class FolderCache : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("STOKER_CACHE_DIR", (cache_ / "cache").c_str(), 1);
    write_file(data_ / "cat/a.jpg", std::string(700, 'a'));
    write_file(data_ / "cat/b.JPEG", std::string(300, 'b'));
    write_file(data_ / "cat/more/c.png", std::string(500, 'c'));
    write_file(data_ / "dog/d.webp", std::string(900, 'd'));
    write_file(data_ / "dog/notes.txt", std::string(10, 'n'));
  }
  void TearDown() override { ::unsetenv("STOKER_CACHE_DIR"); }
  // Every folder's time an hour back: past the "changed in the last seconds" rule.
  void settle() const {
    const auto past = fs::file_time_type::clock::now() - std::chrono::hours(1);
    fs::last_write_time(root(), past);
    for (const auto& e : fs::recursive_directory_iterator(root())) {
      if (e.is_directory()) fs::last_write_time(e.path(), past);
    }
  }
  std::string root() const { return data_.path(); }
  // The files in the cache (entries and any temporary left behind), wherever kept.
  size_t entries() const {
    const fs::path dir = fs::path(cache_.path()) / "cache";
    if (!fs::exists(dir)) return 0;
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }
  ImageDir data_, cache_;
};

using FaultsFolderCache = FolderCache;  // the faults family's suites are named Faults*

void expect_same(const FolderListing& a, const FolderListing& b) {
  EXPECT_EQ(a.classes, b.classes);
  EXPECT_EQ(a.paths, b.paths);
  EXPECT_EQ(a.path_at, b.path_at);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.names_hash, b.names_hash);
  ASSERT_EQ(a.folders.size(), b.folders.size());
  for (size_t i = 0; i < a.folders.size(); ++i) {
    EXPECT_EQ(a.folders[i].rel, b.folders[i].rel);
    EXPECT_EQ(a.folders[i].mtime_ns, b.folders[i].mtime_ns);
  }
}

TEST_F(FolderCache, ACachedListingIsTheWalksAndGivesTheSameSource) {
  settle();
  const ImageFolderSource first(root());
  ASSERT_EQ(entries(), 1u) << "the walk was not kept";
  const auto cached = load_folder_listing(root());
  ASSERT_TRUE(cached.has_value());
  expect_same(*cached, walk_image_folder(root()));
  EXPECT_EQ(cached->folders.size(), 4u);  // the root, cat, cat/more, dog
  const ImageFolderSource again(root());
  EXPECT_EQ(again.fingerprint(), first.fingerprint());
  ASSERT_EQ(again.size(), 4u);
  for (uint64_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again.location(i), first.location(i));
    EXPECT_EQ(again.label(i), first.label(i));
  }
  EXPECT_EQ(again.mean_bytes(), first.mean_bytes());
}

TEST_F(FolderCache, AFolderChangedInTheLastSecondsIsNotKept) {
  const ImageFolderSource fresh(root());  // just written: its times may still move unseen
  EXPECT_EQ(entries(), 0u);
}

TEST_F(FaultsFolderCache, AnAddedRemovedOrRenamedFileOrAnAddedClassMakesItUnused) {
  const std::vector<std::pair<const char*, std::function<void()>>> changes = {
      {"a file added", [&] { write_file(data_ / "dog/e.jpg", std::string(40, 'e')); }},
      {"a file removed", [&] { fs::remove(data_ / "cat/b.JPEG"); }},
      {"a file renamed", [&] { fs::rename(data_ / "cat/a.jpg", data_ / "cat/z.jpg"); }},
      {"a file added deep down",
       [&] { write_file(data_ / "cat/more/f.jpg", std::string(9, 'f')); }},
      {"a class added", [&] { write_file(data_ / "emu/g.jpg", std::string(30, 'g')); }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    settle();
    const ImageFolderSource before(root());
    ASSERT_TRUE(load_folder_listing(root()).has_value());
    change();
    EXPECT_FALSE(load_folder_listing(root()).has_value());
    const ImageFolderSource after(root());
    EXPECT_NE(after.fingerprint(), before.fingerprint());
    std::vector<std::string> walked;
    for (uint64_t i = 0; i < after.size(); ++i) walked.push_back(after.location(i));
    const FolderListing fresh = walk_image_folder(root());
    ASSERT_EQ(walked.size(), fresh.size());
    for (size_t i = 0; i < walked.size(); ++i) EXPECT_EQ(walked[i], fresh.path(i));
  }
}

// Rewritten in place, the folders' times stay: the content sample read at every open tells.
TEST_F(FaultsFolderCache, AFileRewrittenInPlaceIsStillAnotherDataset) {
  settle();
  const uint64_t before = ImageFolderSource(root()).fingerprint();
  ASSERT_TRUE(load_folder_listing(root()).has_value());
  write_file(data_ / "dog/d.webp", std::string(900, 'D'));  // same size, same folder time
  settle();
  const uint64_t same_size = ImageFolderSource(root()).fingerprint();
  EXPECT_NE(same_size, before);
  write_file(data_ / "dog/d.webp", std::string(100, 'd'));  // shorter
  settle();
  const ImageFolderSource shorter(root());
  EXPECT_NE(shorter.fingerprint(), before);
  EXPECT_NE(shorter.fingerprint(), same_size);
  EXPECT_EQ(shorter.mean_bytes(), (700u + 300u + 500u + 100u) / 4);
  // Longer: the sample is the whole file as it is now.
  write_file(data_ / "dog/d.webp", std::string(5000, 'L'));
  settle();
  const ImageFolderSource longer(root());
  ASSERT_EQ(longer.location(3), data_ / "dog/d.webp");
  std::vector<std::byte> scratch;
  EXPECT_EQ(longer.read(3, scratch).bytes.size(), 5000u);
  EXPECT_EQ(longer.read(0, scratch).bytes.size(), 700u);
}

// Some network filesystems give no type in getdents (DT_UNKNOWN): each entry is stat'ed
// then, and the listing is the same.
TEST_F(FaultsFolderCache, EntriesWithoutATypeAreStatedAndListTheSame) {
  std::filesystem::create_symlink(data_ / "cat/more", data_ / "dog/linked");  // a folder link
  std::filesystem::create_symlink(data_ / "nowhere.jpg", data_ / "dog/dangling.jpg");
  const FolderListing typed = walk_image_folder(root());
  const FolderListing untyped = walk_image_folder(root(), {.trust_dtype = false});
  expect_same(typed, untyped);
  ASSERT_EQ(typed.size(), 5u);  // a, b, more/c, d, and c again through the link
  EXPECT_EQ(std::string(typed.path(4)), root() + "/dog/linked/c.png");
}

// The index one rank gives the others: the same source, made without walking the
// folder or reading a file of it.
TEST_F(FolderCache, TheIndexGivesTheSameSourceWithoutListingTheFolder) {
  const ImageFolderSource listed(root());
  const std::string index = listed.index();
  ASSERT_FALSE(index.empty());
  write_file(data_ / "emu/new.jpg", std::string(30, 'n'));  // not in the index: never walked
  fs::remove(data_ / "cat/a.jpg");                          // nor read
  const auto taken = ImageFolderSource::from_index(root() + "/", index);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->fingerprint(), listed.fingerprint());
  EXPECT_EQ(taken->mean_bytes(), listed.mean_bytes());
  EXPECT_EQ(taken->classes(), listed.classes());
  ASSERT_EQ(taken->size(), listed.size());
  for (uint64_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(taken->location(i), listed.location(i));
    EXPECT_EQ(taken->label(i), listed.label(i));
  }
  EXPECT_EQ(taken->index(), index);
}

TEST_F(FaultsFolderCache, AnIndexOfAnotherRootOrCutShortIsNotTaken) {
  const std::string index = ImageFolderSource(root()).index();
  EXPECT_EQ(ImageFolderSource::from_index(data_ / "cat", index), nullptr);
  EXPECT_EQ(ImageFolderSource::from_index(root(), index.substr(0, index.size() - 3)), nullptr);
  EXPECT_EQ(ImageFolderSource::from_index(root(), index + "0 extra.jpg\n"), nullptr);
  EXPECT_EQ(ImageFolderSource::from_index(root(), ""), nullptr);
  EXPECT_EQ(ImageFolderSource::from_index(root(), "stoker-image-folder-index zz\n"), nullptr);
}

TEST_F(FaultsFolderCache, WritersAtOnceLeaveOneWholeEntry) {
  settle();
  const FolderListing walked = walk_image_folder(root());
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) store_folder_listing(root(), walked);
    });
  }
  for (int i = 0; i < 200; ++i) {
    const auto seen = load_folder_listing(root());  // none yet, or a whole one
    if (seen) expect_same(*seen, walked);
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(entries(), 1u) << "a temporary file was left";
  const auto last = load_folder_listing(root());
  ASSERT_TRUE(last.has_value());
  expect_same(*last, walked);
}

TEST_F(FaultsFolderCache, ACacheThatCannotBeWrittenIsOneLineAndListingGoesOn) {
  settle();
  write_file(cache_ / "file", std::string("x"));
  ::setenv("STOKER_CACHE_DIR", (cache_ / "file").c_str(), 1);  // a file: no folder under it
  ::testing::internal::CaptureStderr();
  const uint64_t a = ImageFolderSource(root()).fingerprint();
  const uint64_t b = ImageFolderSource(root()).fingerprint();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(a, b);
  EXPECT_NE(err.find("stoker: cannot keep the listing of " + root() + " in the cache " +
                     cache_ / "file/" + std::to_string(::geteuid()) + "/folders"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("cannot keep", err.find("cannot keep") + 1), std::string::npos)
      << "said more than once: " << err;
}

}  // namespace
}  // namespace stoker
