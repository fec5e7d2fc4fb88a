// The image folder listed once per job (stoker/distributed/shared_listing.hpp), both sides
// of the message without a transport: what rank 0 sends, what another rank makes of it. The
// transports (MPI's broadcast, torch.distributed's store) are run by python.faults_metadata.
#include "stoker/distributed/shared_listing.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <new>

#include "error_text.hpp"
#include "image_fixtures.hpp"
#include "scoped_env.hpp"
#include "stoker/common/error.hpp"

// The next allocation of this thread fails with std::bad_alloc when armed (operator new
// below): a rank 0 out of memory, deterministically.
thread_local bool t_fail_next_allocation = false;

namespace stoker {
namespace {

using test::ImageDir;
using test::write_file;

class SharedListing : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.set("STOKER_CACHE_DIR", "none");
    write_file(data_ / "cat/a.jpg", std::string(700, 'a'));
    write_file(data_ / "dog/b.jpg", std::string(300, 'b'));
  }
  test::ScopedEnv env_;
  ImageDir data_;
};
using FaultsSharedListing = SharedListing;  // the faults family's suites are named Faults*

TEST_F(SharedListing, AnotherRankTakesWhatRankZeroListed) {
  std::string sent;
  const auto listed = list_and_share(data_.path(), [&](const std::string& m) { sent = m; });
  write_file(data_ / "emu/c.jpg", std::string(30, 'c'));  // after the listing: not in it
  const auto taken = take_shared_listing(data_.path(), sent, 1);
  EXPECT_EQ(taken->size(), 2u);
  EXPECT_EQ(taken->fingerprint(), listed->fingerprint());
  EXPECT_EQ(taken->location(1), data_ / "dog/b.jpg");
}

TEST_F(FaultsSharedListing, RankZerosErrorIsSentAndEveryRankRaisesIt) {
  ImageDir empty;
  std::string sent;
  EXPECT_THROW(list_and_share(empty.path(), [&](const std::string& m) { sent = m; }), Error);
  ASSERT_EQ(sent.rfind("error\n", 0), 0u) << sent;
  const std::string e = test::error_text([&] { take_shared_listing(empty.path(), sent, 3); });
  EXPECT_EQ(e, empty.path() + ": rank 0 could not list it: " + empty.path() +
                   ": holds no class subfolders (expected ROOT/CLASS/IMAGE.jpg (ImageNet / "
                   "torchvision ImageFolder layout)) (see rank 0's error; every rank reads the "
                   "folder rank 0 lists)");
}

TEST_F(FaultsSharedListing, AMessageThisRankCannotTakeIsOneLineAndItListsItself) {
  for (const std::string& message :
       {std::string("ok\nstoker-image-folder-index v0\n"), std::string("something else")}) {
    ::testing::internal::CaptureStderr();
    const auto s = take_shared_listing(data_.path(), message, 2);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(s->size(), 2u);
    EXPECT_EQ(err,
              "stoker: rank 2: cannot take rank 0's listing of the image folder (it lists "
              "another root than " +
                  data_.path() + ", or comes from another stoker version): listing it here\n");
  }
}

// Any exception on rank 0, not only stoker::Error, reaches the others as its error: a
// bad_alloc used to leave them waiting for the whole STOKER_AGREE_TIMEOUT.
TEST_F(FaultsSharedListing, RankZeroOutOfMemorySendsItsErrorAndRethrows) {
  std::string sent;
  t_fail_next_allocation = true;
  EXPECT_THROW(list_and_share(data_.path(), [&](const std::string& m) { sent = m; }),
               std::bad_alloc);
  t_fail_next_allocation = false;
  ASSERT_EQ(sent.rfind("error\n", 0), 0u) << "nothing was sent: the others would wait";
  const std::string e = test::error_text([&] { take_shared_listing(data_.path(), sent, 1); });
  EXPECT_NE(e.find(": rank 0 could not list it: "), std::string::npos) << e;
  EXPECT_NE(e.find("std::bad_alloc"), std::string::npos) << e;
}

// A file name may hold any byte but NUL and '/': one with a newline is shared like any other
// (it used to make every rank list the folder itself, blaming "another root").
TEST_F(FaultsSharedListing, AFileNameWithANewlineIsSharedNotListedByEveryRank) {
  write_file(data_ / "cat/two\nlines.jpg", std::string(50, 'n'));
  write_file(data_ / "dog\\x/c.jpg", std::string(60, 'c'));  // a backslash in a class name
  std::string sent;
  const auto listed = list_and_share(data_.path(), [&](const std::string& m) { sent = m; });
  ::testing::internal::CaptureStderr();
  const auto taken = take_shared_listing(data_.path(), sent, 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(taken->size(), 4u);
  EXPECT_EQ(taken->fingerprint(), listed->fingerprint());
  EXPECT_EQ(taken->classes(), listed->classes());
  for (uint64_t i = 0; i < taken->size(); ++i) {
    EXPECT_EQ(taken->location(i), listed->location(i));
    EXPECT_EQ(taken->label(i), listed->label(i));
  }
  EXPECT_EQ(taken->location(1), data_ / "cat/two\nlines.jpg");
}

// A node's own copy (staged per node) is checked against rank 0's content sample by the
// node's first rank: what differs is named, with the node; the same copy passes.
TEST_F(FaultsSharedListing, ANodesCopyThatDiffersNamesTheNodeAndTheFile) {
  env_.set("SLURMD_NODENAME", "n2");
  std::string sent;
  list_and_share(data_.path(), [&](const std::string& m) { sent = m; });
  EXPECT_TRUE(checks_node_copy(2, 0));
  EXPECT_FALSE(checks_node_copy(0, 0));
  EXPECT_FALSE(checks_node_copy(3, 1));
  EXPECT_EQ(node_copy_problem(*take_shared_listing(data_.path(), sent, 2)), "");
  write_file(data_ / "dog/b.jpg", std::string(300, 'B'));  // same size, other bytes
  const std::string differs = node_copy_problem(*take_shared_listing(data_.path(), sent, 2));
  EXPECT_EQ(differs, "the copy on n2 is not rank 0's: " + data_ / "dog/b.jpg" +
                         ": differs in size or content");
  std::filesystem::remove(data_ / "cat/a.jpg");  // missing on this node
  const std::string missing = node_copy_problem(*take_shared_listing(data_.path(), sent, 2));
  EXPECT_EQ(missing.rfind(
                "the copy on n2 is not rank 0's: " + data_ / "cat/a.jpg" + ": cannot be opened", 0),
            0u)
      << missing;
  const std::string e = test::error_text([&] { throw node_copy_error(data_.path(), differs); });
  EXPECT_EQ(e, data_.path() + ": " + differs +
                   " (every node must hold the same dataset: stage the same copy on every "
                   "node, or read one shared copy)");
  // A rank that listed the folder itself has nothing to compare.
  const ImageFolderSource own(data_.path());
  EXPECT_EQ(node_copy_problem(own), "");
}

}  // namespace
}  // namespace stoker

// GCC cannot see that this new and these deletes are a pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (t_fail_next_allocation) {
    t_fail_next_allocation = false;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
