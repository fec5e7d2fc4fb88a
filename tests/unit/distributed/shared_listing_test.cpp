// The image folder listed once per job (stoker/distributed/shared_listing.hpp), both sides
// of the message without a transport: what rank 0 sends, what another rank makes of it. The
// transports (MPI's broadcast, torch.distributed's store) are run by python.faults_metadata.
#include "stoker/distributed/shared_listing.hpp"

#include <gtest/gtest.h>

#include "error_text.hpp"
#include "image_fixtures.hpp"
#include "scoped_env.hpp"
#include "stoker/common/error.hpp"

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

}  // namespace
}  // namespace stoker
