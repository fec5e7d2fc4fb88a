// What the folder-listing cache must never take (src/sources/folder_listing.hpp,
// cache_dir.hpp): a tree copied in with restored times and a class added (every label would
// shift), and a forged entry (another user's file, a group-writable one, a relabelled image,
// a path out of its class folder, a reordered class list, a FIFO at the entry's name). Each
// open must give what a fresh walk gives, and never wait.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>

#include "image_fixtures.hpp"
#include "scoped_env.hpp"
#include "sources/folder_listing.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using test::ImageDir;
using test::write_file;

// Every folder under (and with) `root` set to one fixed instant, as a reproducible build, tar x
// or rsync -a leave them.
void set_folder_times(const std::string& root) {
  const timeval fixed[2] = {{1'600'000'000, 0}, {1'600'000'000, 0}};
  ASSERT_EQ(::utimes(root.c_str(), fixed), 0);
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_directory()) {
      ASSERT_EQ(::utimes(e.path().c_str(), fixed), 0);
    }
  }
}

class FaultsFolderCacheTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.set("STOKER_CACHE_DIR", (cache_ / "cache").c_str());
    for (const char* f : {"c0/a.jpg", "c0/b.jpg", "c1/c.jpg", "c1/d.jpg"}) {
      write_file(data_ / f, std::string(100, f[3]));
    }
    set_folder_times(data_.path());
  }
  std::string root() const { return data_.path(); }

  // What ImageFolder would give: the fresh walk's classes, paths and labels.
  void expect_walked(const ImageFolderSource& s) const {
    const FolderListing walked = walk_image_folder(root());
    EXPECT_EQ(s.classes(), walked.classes);
    ASSERT_EQ(s.size(), walked.size());
    for (uint64_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(s.location(i), walked.path(i));
      EXPECT_EQ(s.label(i), walked.labels[i]);
    }
  }
  // The cache's one listing entry, wherever this stoker keeps it.
  fs::path entry() const {
    for (const auto& e : fs::recursive_directory_iterator(cache_ / "cache")) {
      if (e.path().extension() == ".list") return e.path();
    }
    ADD_FAILURE() << "no listing was kept";
    return {};
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The entry rewritten by `edit` (the same inode: owner and mode stay).
  void forge(const std::function<std::string(std::string)>& edit) const {
    const fs::path p = entry();
    const std::string forged = edit(read(p));
    std::ofstream(p, std::ios::binary | std::ios::trunc) << forged;
  }
  // A consistent listing with the last image left out: only who wrote it can tell.
  static std::string without_last_image(std::string text) {
    text.erase(text.rfind('\n', text.size() - 2) + 1);  // the last line
    std::istringstream lines(text);
    std::string magic, key, counts;
    std::getline(lines, magic);
    std::getline(lines, key);
    std::getline(lines, counts);
    std::istringstream numbers(counts);
    size_t classes = 0, files = 0;
    numbers >> classes >> files;
    std::string rest;
    std::getline(numbers, rest);
    const size_t head = magic.size() + key.size() + counts.size() + 3;
    return magic + "\n" + key + "\n" + std::to_string(classes) + " " + std::to_string(files - 1) +
           rest + "\n" + text.substr(head);
  }
  test::ScopedEnv env_;
  ImageDir data_, cache_;
};

// A copy with restored times: c0 and c1 with one fixed time, listed; then b0 added and the times
// set back. ImageFolder then has 3 classes, c0 labelled 1: a reused listing would say 0.
TEST_F(FaultsFolderCacheTrust, ATreeWithRestoredTimesAndANewClassIsListedAgain) {
  const ImageFolderSource first(root());
  ASSERT_EQ(first.classes().size(), 2u);
  entry();
  write_file(data_ / "b0/e.jpg", std::string(100, 'e'));
  set_folder_times(root());
  const ImageFolderSource again(root());
  EXPECT_EQ(again.classes(), (std::vector<std::string>{"b0", "c0", "c1"}));
  EXPECT_EQ(again.size(), 5u);
  expect_walked(again);
}

// The same tree replaced by a copy that restores every time (cp -a): other inodes.
TEST_F(FaultsFolderCacheTrust, ACopyWithRestoredTimesAndANewClassIsListedAgain) {
  const ImageFolderSource first(root());
  entry();
  const std::string copy = root() + ".copy";
  fs::copy(root(), copy, fs::copy_options::recursive);
  write_file(copy + "/b0/e.jpg", std::string(100, 'e'));
  set_folder_times(copy);
  fs::remove_all(root());
  fs::rename(copy, root());
  const ImageFolderSource again(root());
  EXPECT_EQ(again.classes().size(), 3u);
  expect_walked(again);
}

TEST_F(FaultsFolderCacheTrust, AForgedEntryIsNeverUsed) {
  const auto relabel = [](std::string t) {
    const size_t at = t.find("0 /c0/a.jpg\n");
    return t.replace(at, 1, "1");  // c0's image labelled as c1's
  };
  const auto escape = [this](std::string t) {
    write_file(cache_ / "elsewhere/x.jpg", std::string(100, 'x'));
    const std::string out =
        "/c0/../../" + fs::path(cache_.path()).filename().string() + "/elsewhere/x.jpg";
    const size_t at = t.find("/c0/a.jpg\n");
    return t.replace(at, 9, out);
  };
  const auto reorder = [](std::string t) {  // c1 before c0: every label swapped with it
    const size_t at = t.find("\nc0\nc1\n");
    t.replace(at, 7, "\nc1\nc0\n");
    for (const char* f : {"/c0/a.jpg", "/c0/b.jpg"}) t.replace(t.find(f) - 2, 1, "1");
    for (const char* f : {"/c1/c.jpg", "/c1/d.jpg"}) t.replace(t.find(f) - 2, 1, "0");
    return t;
  };
  const std::vector<std::pair<const char*, std::function<void()>>> forgeries = {
      {"an image relabelled", [&] { forge(relabel); }},
      {"a path out of its class folder", [&] { forge(escape); }},
      {"the class list reordered", [&] { forge(reorder); }},
      {"another user's entry",
       [&] {
         forge(without_last_image);
         ASSERT_EQ(::chown(entry().c_str(), 65534, 65534), 0);
       }},
      {"an entry other users can write",
       [&] {
         forge(without_last_image);
         fs::permissions(entry(), fs::perms::group_write, fs::perm_options::add);
       }},
      {"another user's cache folder",
       [&] {
         forge(without_last_image);
         ASSERT_EQ(::chown(entry().parent_path().c_str(), 65534, 65534), 0);
       }},
  };
  for (const auto& [what, forgery] : forgeries) {
    SCOPED_TRACE(what);
    fs::remove_all(cache_ / "cache");
    const ImageFolderSource listed(root());  // keeps the genuine entry
    forgery();
    ::testing::internal::CaptureStderr();
    const ImageFolderSource opened(root());
    ::testing::internal::GetCapturedStderr();
    expect_walked(opened);
  }
}

// A FIFO at the entry's name would block the open forever (no writer ever comes): it must be
// passed over. Should it block, the test opens the FIFO's other end to free it, and fails.
TEST_F(FaultsFolderCacheTrust, AFifoAtTheEntrysNameIsPassedOverNotWaitedOn) {
  const ImageFolderSource listed(root());
  const fs::path p = entry();
  fs::remove(p);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  auto opened = std::async(std::launch::async, [&] { return ImageFolderSource(root()).size(); });
  if (opened.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);  // EOF for the blocked reader
    if (fd >= 0) ::close(fd);
    ADD_FAILURE() << "the open waited on a FIFO planted at the cache entry's name";
  }
  EXPECT_EQ(opened.get(), 4u);
}

}  // namespace
}  // namespace stoker
