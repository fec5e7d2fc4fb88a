// Real corruption in an image folder (a truncated JPEG, a zero-byte file, garbage) through
// the loader and `stoker bench images`: the default run stops naming the file and the
// option that changes the policy; under skip the files are counted and the epoch completes.
#include <gtest/gtest.h>

#include "image_fixtures.hpp"
#include "run_command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker {
namespace {

// 40 good JPEGs in two classes, plus a JPEG cut in half and a zero-byte file.
struct CorruptFolder {
  test::ImageDir dir;
  std::string truncated = dir / "b/truncated.jpg", empty = dir / "a/empty.jpeg";
  CorruptFolder() {
    for (int i = 0; i < 40; ++i) {
      test::write_file(dir / (std::string(i % 2 ? "a/" : "b/") + std::to_string(i) + ".jpg"),
                       test::test_jpeg(64, 48, static_cast<uint64_t>(i)));
    }
    const auto whole = test::test_jpeg(64, 48, 99);
    test::write_file(truncated, whole.data(), whole.size() / 2);
    test::write_file(empty, std::string());
  }
};

LoaderOptions options(CorruptPolicy policy, double max_skip_fraction) {
  LoaderOptions o;
  o.batch_size = 8;
  o.world_size = 1;
  o.on_corrupt = policy;
  o.max_skip_fraction = max_skip_fraction;
  o.plan = plan_for_this_process({}).plan;
  o.pin_threads = false;
  o.workers = 2;
  return o;
}

std::shared_ptr<const Transform> small_transform() {
  ImageTransformOptions t;
  t.size = 16;
  return make_image_transform(t);
}

TEST(FaultsImages, ATruncatedOrEmptyFileStopsTheDefaultRunNamingIt) {
  CorruptFolder f;
  auto source = std::make_shared<ImageFolderSource>(f.dir.path());
  ASSERT_EQ(source->size(), 42u);
  Loader loader(source, small_transform(), options(CorruptPolicy::Error, 0.01));
  std::string what;
  try {
    for (Batch& b : loader) (void)b;
  } catch (const Error& e) {
    what = e.what();
  }
  const bool names_one =
      what.rfind(f.truncated + ": sample ", 0) == 0 || what.rfind(f.empty + ": sample ", 0) == 0;
  EXPECT_TRUE(names_one) << what;
  EXPECT_NE(what.find("cannot decode image: "), std::string::npos) << what;
  EXPECT_NE(what.find("or use on_corrupt = CorruptPolicy::Skip to leave corrupt samples out"),
            std::string::npos)
      << what;
}

TEST(FaultsImages, UnderSkipTheyAreCountedAndTheEpochCompletes) {
  CorruptFolder f;
  auto source = std::make_shared<ImageFolderSource>(f.dir.path());
  Loader loader(source, small_transform(), options(CorruptPolicy::Skip, 0.05));  // 2 of 42
  uint64_t samples = 0;
  for (Batch& b : loader) samples += b.size();
  EXPECT_EQ(samples, 40u);
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.skipped, 2u);
  std::vector<std::string> files = st.skipped_files;
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{f.empty, f.truncated}));
}

TEST(FaultsImages, BenchNamesItsOwnFlags) {
  CorruptFolder f;
  const std::string bench = test::stoker_cli() + " bench images " + f.dir.path() +
                            " --size 16 --batch-size 8 --epochs 1 --workers 2 --world-size 1";
  const test::CommandResult stop = test::run_command(bench + " 2>&1");
  EXPECT_NE(stop.status, 0);
  EXPECT_NE(stop.out.find("or use --on-corrupt=skip to leave corrupt samples out"),
            std::string::npos)
      << stop.out;
  const test::CommandResult too_many = test::run_command(bench + " --on-corrupt=skip 2>&1");
  EXPECT_NE(too_many.status, 0);  // 2 of 42 is more than the default 1 %
  EXPECT_NE(too_many.out.find("raise --max-skip-fraction"), std::string::npos) << too_many.out;
  const test::CommandResult skip =
      test::run_command(bench + " --on-corrupt=skip --max-skip-fraction 0.05 --json 2>/dev/null");
  EXPECT_EQ(skip.status, 0) << skip.out;
  EXPECT_NE(skip.out.find("\"skipped\":2"), std::string::npos) << skip.out;
  EXPECT_NE(skip.out.find("\"samples\":40"), std::string::npos) << skip.out;
}

}  // namespace
}  // namespace stoker
