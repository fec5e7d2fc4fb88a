// open_dataset, the one owner of opening a dataset: folder or shards, the transform, the plan
// asked for once when the sample is known, streaming decided by that plan, a cut to the first
// samples, and Loader::open on top of it.
#include "stoker/loader/dataset.hpp"

#include <gtest/gtest.h>

#include "image_fixtures.hpp"
#include "loader_fixture.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/sources/tar_source.hpp"

using namespace stoker;

namespace {

// Two classes of two small JPEGs each.
void write_folder(const test::ImageDir& dir) {
  for (const char* cls : {"cat", "dog"}) {
    std::filesystem::create_directories(dir / cls);
    for (int i = 0; i < 2; ++i) {
      test::write_file(dir / (std::string(cls) + "/" + std::to_string(i) + ".jpg"),
                       test::test_jpeg(40, 30, static_cast<uint64_t>(i)));
    }
  }
}

// One plain shard of three labelled samples in `dir`/shards/.
std::string write_shard(const test::ImageDir& dir) {
  test::TarWriter w;
  for (int i = 0; i < 3; ++i) {
    w.add("s" + std::to_string(i) + ".jpg", test::test_jpeg(32, 32, static_cast<uint64_t>(i)));
    w.add("s" + std::to_string(i) + ".cls", std::to_string(i));
  }
  std::filesystem::create_directories(dir / "shards");
  const std::vector<char> tar = w.finish();
  test::write_file(dir / "shards/a.tar", tar.data(), tar.size());
  return dir / "shards";
}

// A PlanFor that counts its calls and remembers the sample it was asked for.
struct CountingPlan {
  Plan plan = test::test_plan(1, 2, 64ull << 20);
  int calls = 0;
  SampleSpec asked;
  PlanFor fn() {
    return [this](const SampleSpec& s) -> const Plan& {
      ++calls;
      asked = s;
      return plan;
    };
  }
};

ImageInput small_images(std::vector<std::string> paths) {
  ImageInput in;
  in.paths = std::move(paths);
  in.transform.size = 16;
  return in;
}

}  // namespace

TEST(Dataset, AFolderOfClassFoldersIsAnImageFolderWithItsClasses) {
  test::ImageDir dir;
  write_folder(dir);
  CountingPlan p;
  const Dataset d = open_dataset({small_images({dir.path()})}, p.fn(), 1, false);
  EXPECT_EQ(d.source->size(), 4u);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(p.calls, 1);
  EXPECT_EQ(p.asked.bytes(), d.transform->output_spec().bytes());
  EXPECT_EQ(d.transform->output_spec().shape, (std::vector<int64_t>{3, 16, 16}));
}

TEST(Dataset, AFolderHoldingShardsIsShardsAndStreamsWhenThePlanSays) {
  test::ImageDir dir;
  const std::string shards = write_shard(dir);
  for (bool plan_streams : {false, true}) {
    CountingPlan p;
    p.plan.stream = plan_streams;
    const Dataset d = open_dataset({small_images({shards})}, p.fn(), 1, false);
    const auto* tar = dynamic_cast<const TarShardSource*>(d.source.get());
    ASSERT_NE(tar, nullptr);
    EXPECT_EQ(tar->size(), 3u);
    EXPECT_EQ(tar->streamed(), plan_streams);
    EXPECT_EQ(p.calls, 1);
    EXPECT_TRUE(d.classes.empty());
  }
}

TEST(Dataset, AShardStreamsAsAskedWhateverThePlan) {
  test::ImageDir dir;
  ImageInput in = small_images({write_shard(dir)});
  in.stream = true;
  CountingPlan p;
  const Dataset d = open_dataset({in}, p.fn(), 1, false);
  EXPECT_TRUE(dynamic_cast<const TarShardSource*>(d.source.get())->streamed());
}

TEST(Dataset, TokensWidenedOrCopiedAndThePlanAskedOnce) {
  test::TempDir dir;
  TokenInput in;
  in.paths = {test::write_tokens(dir, 64 * 10 + 1)};
  in.seq_len = 64;
  for (bool widen : {false, true}) {
    in.widen = widen;
    CountingPlan p;
    const Dataset d = open_dataset({in}, p.fn(), 1, false);
    EXPECT_EQ(d.source->size(), 10u);
    EXPECT_EQ(d.transform->output_spec().dtype, widen ? DType::I64 : DType::U16);
    EXPECT_EQ(p.calls, 1);
  }
}

TEST(Dataset, FirstSamplesCutsAByIndexSource) {
  test::TempDir dir;
  TokenInput in;
  in.paths = {test::write_tokens(dir, 64 * 10 + 1)};
  in.seq_len = 64;
  DatasetSpec spec{in};
  spec.first_samples = 4;
  CountingPlan p;
  const Dataset d = open_dataset(spec, p.fn(), 1, false);
  EXPECT_EQ(d.source->size(), 4u);
  EXPECT_GT(d.source->bytes_per_sample(), 0.0);
  spec.first_samples = 100;  // more than there are: the whole dataset
  EXPECT_EQ(open_dataset(spec, p.fn(), 1, false).source->size(), 10u);
}

TEST(Dataset, AMissingFolderIsAnErrorNamingIt) {
  CountingPlan p;
  const std::string missing = "/nonexistent/stoker-dataset";
  ImageInput in = small_images({missing});
  in.is = ImageInput::Is::Folder;
  EXPECT_NE(test::error_of([&] { open_dataset({in}, p.fn(), 1, false); }).find(missing),
            std::string::npos);
}

TEST(Dataset, LoaderOpenPlansOnceAndRunsThePlanItOpenedUnder) {
  test::ImageDir dir;
  const std::string shards = write_shard(dir);
  LoaderOptions o = test::test_options(1, 1);
  o.plan->stream = true;  // the plan the loader runs is the one open_dataset read
  std::unique_ptr<Loader> loader = Loader::open({small_images({shards})}, o);
  EXPECT_TRUE(loader->plan().stream);
  EXPECT_TRUE(dynamic_cast<const TarShardSource&>(loader->source()).streamed());
  uint64_t samples = 0;
  for (Batch& b : *loader) samples += b.size();
  EXPECT_EQ(samples, 3u);
}
