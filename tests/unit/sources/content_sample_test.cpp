// A resume state refuses a dataset whose content changed while its names and sizes did
// not: every file-backed source's fingerprint reads a sample of the
// content (src/sources/content_sample.hpp), so a dataset rewritten in place gets another
// fingerprint and DistributedSampler::restore refuses a state saved on the old one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "image_fixtures.hpp"
#include "sources/content_sample.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/sources/tar_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "tar_writer.hpp"

namespace stoker {
namespace {

using test::ImageDir;
using test::write_file;

// Overwrites one byte of `path` at `offset` (the file keeps its size and name).
void poke(const std::string& path, uint64_t offset, char value) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(value);
  ASSERT_TRUE(f.good()) << path;
}

std::string tar_of(int samples, size_t image_bytes) {
  test::TarWriter w;
  for (int i = 0; i < samples; ++i) {
    w.add("k" + std::to_string(100 + i) + ".jpg", std::string(image_bytes, char('a' + i % 26)));
    w.add("k" + std::to_string(100 + i) + ".cls", std::to_string(i));
  }
  const std::vector<char> bytes = w.finish();
  return {bytes.begin(), bytes.end()};
}

// A state saved on `before` is refused on `after` with an error that says the dataset
// differs, and restores on a dataset of the same content.
void expect_refused(uint64_t size, uint64_t before, uint64_t after) {
  ASSERT_NE(before, after);
  SamplerOptions opts;
  opts.size = size;
  opts.seed = 3;
  opts.fingerprint = before;
  DistributedSampler saved(opts);
  const SamplerState state = saved.state(1);
  DistributedSampler same(opts);
  EXPECT_NO_THROW(same.restore(state));
  opts.fingerprint = after;
  DistributedSampler changed(opts);
  try {
    changed.restore(state);
    FAIL() << "a state of another dataset content was restored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fingerprint"), std::string::npos) << e.what();
  }
}

TEST(FaultsContentFingerprint, ImageFolderRewrittenInPlaceIsAnotherDataset) {
  ImageDir d;
  write_file(d / "c0/x.jpg", std::string(5000, 'x'));
  write_file(d / "c1/y.jpg", std::string(300, 'y'));
  const uint64_t before = ImageFolderSource(d.path()).fingerprint();
  EXPECT_EQ(ImageFolderSource(d.path()).fingerprint(), before);  // stable when unchanged
  poke(d / "c1/y.jpg", 150, 'z');
  expect_refused(2, before, ImageFolderSource(d.path()).fingerprint());
}

TEST(FaultsContentFingerprint, TarShardsRewrittenInPlaceAreAnotherDataset) {
  ImageDir d;
  ::setenv("STOKER_CACHE_DIR", "none", 1);
  const std::string tar = tar_of(4, 700);
  write_file(d / "a.tar", tar.data(), tar.size());
  const uint64_t random = TarShardSource({d / "a.tar"}).fingerprint();
  const uint64_t streamed =
      TarShardSource({d / "a.tar"}, {.labels = true, .stream = true}).fingerprint();
  EXPECT_EQ(random, streamed);       // the same for both ways of reading the same files
  poke(d / "a.tar", 512 + 20, 'Q');  // inside the first image, after its header
  expect_refused(4, random, TarShardSource({d / "a.tar"}).fingerprint());
  ::unsetenv("STOKER_CACHE_DIR");
}

TEST(FaultsContentFingerprint, TokenAndRecordFilesRewrittenInPlaceAreAnotherDataset) {
  ImageDir d;
  write_file(d / "t.bin", std::string(4000, '\1'));
  write_file(d / "labels.bin", std::string(8 * 100, '\0'));
  const uint64_t tokens = TokenFileSource(d / "t.bin", 10).fingerprint();
  const uint64_t set =
      TokenFileSource(std::vector<std::string>{d / "t.bin"}, 10, DType::U16).fingerprint();
  const uint64_t records = RecordFileSource(d / "t.bin", 40, d / "labels.bin").fingerprint();
  poke(d / "t.bin", 3999, '\2');
  expect_refused(199, tokens, TokenFileSource(d / "t.bin", 10).fingerprint());
  expect_refused(
      199, set,
      TokenFileSource(std::vector<std::string>{d / "t.bin"}, 10, DType::U16).fingerprint());
  expect_refused(100, records, RecordFileSource(d / "t.bin", 40, d / "labels.bin").fingerprint());
  // The labels are content too.
  const uint64_t labelled = RecordFileSource(d / "t.bin", 40, d / "labels.bin").fingerprint();
  poke(d / "labels.bin", 8 * 50, '\7');
  expect_refused(100, labelled, RecordFileSource(d / "t.bin", 40, d / "labels.bin").fingerprint());
}

// A set larger than the sample (4 MiB): 1024 blocks of 4 KiB evenly spaced over the files
// end to end, first and last included; a change inside a sampled block is seen, the cost
// stays 1024 reads whatever the size, and the same bytes elsewhere give the same hash.
TEST(FaultsContentFingerprint, LargeSetsHashEvenlySpacedBlocks) {
  ImageDir a, b;
  const uint64_t size = 3 * kContentBlocks * kContentBlockBytes + 12345;  // about 12 MiB
  const std::string bytes(size / 2, 'q');
  for (const ImageDir* d : {&a, &b}) {
    write_file(*d / "0.bin", bytes);
    write_file(*d / "1.bin", bytes + "r");
  }
  auto hash = [](const ImageDir& d) {
    return content_sample_hash(
        {{(d / "0.bin").c_str(), size / 2}, {(d / "1.bin").c_str(), size / 2 + 1}}, 7);
  };
  EXPECT_EQ(hash(a), hash(b));
  poke(b / "1.bin", size / 2, 's');  // the last byte of the set: in the last block
  EXPECT_NE(hash(a), hash(b));
  poke(b / "1.bin", size / 2, 'r');
  poke(b / "0.bin", 0, 's');  // the first byte: in the first block
  EXPECT_NE(hash(a), hash(b));
}

TEST(FaultsContentFingerprint, AFileThatShrankSinceListingIsANamedError) {
  ImageDir d;
  write_file(d / "x.bin", std::string(100, 'x'));
  write_file(d / "y.bin", std::string(10, 'y'));
  try {
    content_sample_hash({{(d / "x.bin").c_str(), 100}, {(d / "y.bin").c_str(), 50}}, 0);
    FAIL() << "no error for a file shorter than listed";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), d / "y.bin");
    EXPECT_NE(e.problem().find("shorter than when it was listed"), std::string::npos);
  }
}

}  // namespace
}  // namespace stoker
