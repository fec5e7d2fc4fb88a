// The device feeder fed a mixed batch (LoaderOptions::mix): its labels are float32 rows the
// feeder does not copy, and labels() is null; the feeder says so by name instead of reading
// a null pointer.
#include <gtest/gtest.h>

#include "feeder_sim.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/transforms/batch_mix.hpp"

namespace stoker {
namespace {

TEST(FeederMix, AMixedBatchIsRefusedByName) {
  test::TempDir dir;
  // Records of 48 bytes: a 4 x 4 RGB uint8 image each, label 0 (no labels file).
  const std::vector<uint8_t> pixels(16 * 48, 7);
  test::write_bytes(dir.file("images.bin"), pixels.data(), pixels.size());
  auto source = std::make_shared<RecordFileSource>(dir.file("images.bin"), 48);
  LoaderOptions o = test::test_options(4, 1);
  ImageTransformOptions image;
  image.size = 4;
  image.dtype = DType::U8;
  image.mixup_alpha = 0.2;
  o.mix = std::make_shared<BatchMix>(image, 3);
  Loader loader(source, std::make_shared<CopyTransform>(source->spec()), o);
  auto engine = std::make_shared<test::SimEngine>(std::chrono::microseconds(10));
  FeederCore core(engine, test::FeederSim::identity(), false, source->spec());
  loader.start_epoch();
  const std::string what = test::error_of([&] { core.next(loader); });
  EXPECT_NE(what.find("mixed targets (float32 rows of 3 classes"), std::string::npos) << what;
  core.drain();
}

}  // namespace
}  // namespace stoker
