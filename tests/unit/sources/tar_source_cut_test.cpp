// A cut shard (half copied: .tar, .tar.gz, .tar.zst ending early) holds its whole samples
// and then one more, the rest of the shard, which reads as a SampleError naming the shard
// and the byte where its data ends: by random access, by read() while streaming, and
// through a cursor. Before, the source could not be built at all.
#include <gtest/gtest.h>

#include "error_text.hpp"
#include "image_fixtures.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker {
namespace {

using test::ImageDir;
using test::write_file;

// Four samples of a 1000-byte image and a label: each sample is 512 + 1024 + 512 + 512.
std::vector<char> four_samples() {
  test::TarWriter w;
  for (int i = 0; i < 4; ++i) {
    w.add("s" + std::to_string(i) + ".jpg", std::string(1000, static_cast<char>('a' + i)));
    w.add("s" + std::to_string(i) + ".cls", std::to_string(i));
  }
  return w.finish();
}

constexpr size_t kSample = 512 + 1024 + 512 + 512;

// Expects `whole` samples, then the cut naming `shard` and "truncated tar shard".
void expect_cut(const std::string& shard, bool stream, uint64_t whole) {
  TarShardSource src({shard}, {.labels = true, .stream = stream});
  ASSERT_EQ(src.size(), whole + 1) << shard;
  std::vector<std::byte> scratch;
  for (uint64_t i = 0; i < whole; ++i) {
    EXPECT_EQ(src.read(i, scratch).label, static_cast<int64_t>(i));
  }
  try {
    src.read(whole, scratch);
    ADD_FAILURE() << "the cut read as a sample: " << shard;
  } catch (const SampleError& e) {
    EXPECT_EQ(e.index, whole);
    EXPECT_EQ(e.location.rfind(shard + "@", 0), 0u) << e.location;
    EXPECT_NE(e.what.find("truncated tar shard"), std::string::npos) << e.what;
    EXPECT_NE(e.what.find("the rest of the shard is"), std::string::npos) << e.what;
  }
  if (!stream) return;
  auto cursor = src.open_shard(0);
  int64_t label = -1;
  for (uint64_t i = 0; i < whole; ++i) ASSERT_TRUE(cursor->next(&scratch, label));
  EXPECT_THROW(cursor->next(&scratch, label), SampleError);
  EXPECT_FALSE(cursor->next(&scratch, label));
}

TEST(FaultsTarCut, ACutShardIsItsWholeSamplesAndOneCorruptRest) {
  ImageDir d;
  ::setenv("STOKER_CACHE_DIR", "none", 1);
  const std::vector<char> tar = four_samples();
  // Inside sample 2's image (after 2 whole samples), and at a member boundary: after
  // sample 2's image, before its label (a copy cut at a multiple of its block size).
  for (const size_t cut : {2 * kSample + 700, 2 * kSample + 1536}) {
    const std::vector<char> part(tar.begin(), tar.begin() + static_cast<long>(cut));
    write_file(d / "cut.tar", part.data(), part.size());
    expect_cut(d / "cut.tar", false, 2);
    expect_cut(d / "cut.tar", true, 2);
    const std::vector<char> gz = test::gzip_bytes(part);
    write_file(d / "cut.tar.gz", gz.data(), gz.size());
    expect_cut(d / "cut.tar.gz", true, 2);
  }
  // Compressed files cut inside their compressed data.
  const std::vector<char> gz = test::gzip_bytes(tar), zst = test::zstd_bytes(tar);
  write_file(d / "half.tar.gz", gz.data(), gz.size() / 2);
  write_file(d / "half.tar.zst", zst.data(), zst.size() / 2);
  for (const std::string name : {"half.tar.gz", "half.tar.zst"}) {
    TarShardSource src({d / name}, {.labels = true, .stream = true});
    EXPECT_GE(src.size(), 1u) << name;
    EXPECT_LE(src.size(), 4u) << name;  // some whole samples, then the cut
    expect_cut(d / name, true, src.size() - 1);
  }
  ::unsetenv("STOKER_CACHE_DIR");
}

TEST(FaultsTarCut, AWholeShardHasNoCut) {
  ImageDir d;
  const std::vector<char> tar = four_samples();
  write_file(d / "whole.tar", tar.data(), tar.size());
  EXPECT_EQ(TarShardSource({d / "whole.tar"}).size(), 4u);
}

}  // namespace
}  // namespace stoker
