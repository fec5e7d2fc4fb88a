// Token-file and fixed-record sources: layout, locations, and the bad-input errors.
#include <gtest/gtest.h>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"

using namespace stoker;
using stoker::test::error_of;
using stoker::test::TempDir;

TEST(TokenFileSource, WindowsOfSeqLenPlusOneWithStrideSeqLen) {
  TempDir dir;
  const std::string path = test::write_tokens(dir, 1001);
  TokenFileSource src(path, 100, DType::U16);
  EXPECT_EQ(src.size(), 10u);  // (1001 - 1) / 100: the last window ends at token 1000
  EXPECT_EQ(src.tokens(), 1001u);
  EXPECT_EQ(src.spec().shape, (std::vector<int64_t>{101}));
  EXPECT_EQ(src.spec().bytes(), 202u);
  std::vector<std::byte> scratch;
  for (uint64_t i : {0u, 3u, 9u}) {
    RawSample s = src.read(i, scratch);
    ASSERT_EQ(s.bytes.size(), 202u);
    EXPECT_EQ(s.label, 0);
    const auto* t = reinterpret_cast<const uint16_t*>(s.bytes.data());
    EXPECT_EQ(t[0], test::token_value(i * 100));
    EXPECT_EQ(t[100], test::token_value(i * 100 + 100));  // shared with window i+1
  }
  EXPECT_TRUE(scratch.empty());  // a view into the mapping, no copy
  EXPECT_EQ(src.location(3), path + "@600");
  EXPECT_THROW(src.read(10, scratch), SampleError);
  EXPECT_NE(src.describe().find("10 windows of 101 (stride 100)"), std::string::npos);
}

TEST(TokenFileSource, Uint32TokensAndFingerprint) {
  TempDir dir;
  std::vector<uint32_t> v(70000);
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = i * 3;
  const std::string path = dir.file("t32.bin");
  test::write_bytes(path, v.data(), v.size() * 4);
  TokenFileSource src(path, 1000, DType::U32);
  EXPECT_EQ(src.size(), 69u);
  std::vector<std::byte> scratch;
  RawSample s = src.read(68, scratch);
  EXPECT_EQ(reinterpret_cast<const uint32_t*>(s.bytes.data())[1000], 69000u * 3);
  EXPECT_EQ(src.fingerprint(), TokenFileSource(path, 1000, DType::U32).fingerprint());
  EXPECT_NE(src.fingerprint(), TokenFileSource(path, 999, DType::U32).fingerprint());
}

TEST(TokenFileSource, BadFilesGiveErrorsNamingFileAndSizes) {
  TempDir dir;
  const std::string empty = dir.file("empty.bin");
  test::write_bytes(empty, "", 0);
  EXPECT_EQ(error_of([&] { TokenFileSource(empty, 8); }),
            empty + ": the token file is empty (point at a tokenized corpus)");

  const std::string short_file = test::write_tokens(dir, 8, "short.bin");
  EXPECT_EQ(error_of([&] { TokenFileSource(short_file, 8); }),
            short_file +
                ": holds 8 tokens, shorter than one window of 9 (seq_len + 1) (use a shorter "
                "sequence length or a larger file)");
  EXPECT_NO_THROW(TokenFileSource(short_file, 7));  // exactly one window

  const std::string odd = dir.file("odd.bin");
  test::write_bytes(odd, "abcde", 5);
  EXPECT_NE(error_of([&] {
              TokenFileSource(odd, 1);
            }).find("size 5 bytes is not a multiple of the 2-byte uint16 token"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              TokenFileSource(dir.file("missing.bin"), 8);
            }).find("no such token file or folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { TokenFileSource(short_file, 0); }).find("sequence length 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { TokenFileSource(short_file, 4, DType::F32); }).find("not supported"),
            std::string::npos);
}

TEST(RecordFileSource, RecordsLabelsAndSpec) {
  TempDir dir;
  const std::string path = test::write_records(dir, 50, 32);
  RecordFileSource src(path, 32, dir.file("labels.bin"));
  EXPECT_EQ(src.size(), 50u);
  std::vector<std::byte> scratch;
  RawSample s = src.read(7, scratch);
  ASSERT_EQ(s.bytes.size(), 32u);
  EXPECT_EQ(s.label, 70);
  EXPECT_EQ(static_cast<unsigned>(s.bytes[8]), (7u * 7 + 8) & 0xff);
  EXPECT_EQ(src.location(7), path + "@224");
  EXPECT_EQ(src.spec().bytes(), 32u);

  RecordFileSource typed(path, 32, {}, SampleSpec{DType::F32, {2, 4}});
  EXPECT_EQ(typed.read(7, scratch).label, 0);  // no labels file: label 0
  EXPECT_EQ(typed.spec().shape, (std::vector<int64_t>{2, 4}));
}

TEST(RecordFileSource, BadFilesGiveErrorsNamingFileAndSizes) {
  TempDir dir;
  const std::string path = test::write_records(dir, 10, 32);
  EXPECT_EQ(error_of([&] { RecordFileSource(path, 48); }),
            path +
                ": size 320 bytes is not a multiple of the 48-byte record (6 records and 32 "
                "bytes left over) (check the record size, or whether the file was truncated)");
  EXPECT_NE(error_of([&] {
              RecordFileSource(path, 16, dir.file("labels.bin"));
            }).find("holds 80 bytes, but 20 records"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              RecordFileSource(path, 32, {}, SampleSpec{DType::F32, {4}});
            }).find("spec holds 16 bytes but a record is 32"),
            std::string::npos);
  EXPECT_NE(error_of([&] { RecordFileSource(path, 0); }).find("record size 0"), std::string::npos);
  const std::string empty = dir.file("empty.bin");
  test::write_bytes(empty, "", 0);
  EXPECT_EQ(error_of([&] { RecordFileSource(empty, 4); }),
            empty + ": the record file is empty (point at a file of records)");
}
