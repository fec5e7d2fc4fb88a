// Token sets: a list of files or a folder of them, as pre-training corpora ship. Windows
// never straddle two files; .npy headers give the token type and a set must keep one;
// resuming on a changed set is a clear error.
#include <gtest/gtest.h>

#include <filesystem>

#include "loader_fixture.hpp"
#include "stoker/common/error.hpp"

using namespace stoker;
using stoker::test::error_of;
using stoker::test::TempDir;

namespace {

// A raw uint16 file whose token t holds base + t.
std::string write_raw(const TempDir& dir, const std::string& name, uint64_t tokens, uint16_t base) {
  std::vector<uint16_t> v(tokens);
  for (uint64_t t = 0; t < tokens; ++t) v[t] = static_cast<uint16_t>(base + t);
  test::write_bytes(dir.file(name), v.data(), v.size() * 2);
  return dir.file(name);
}

// An .npy file (format 1.0, as numpy.save writes it) of `tokens` values of `descr`.
std::string write_npy(const TempDir& dir, const std::string& name, const std::string& descr,
                      uint64_t tokens, size_t item_bytes) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(tokens) + ",), }";
  dict.resize(((10 + dict.size() + 1 + 63) / 64) * 64 - 10 - 1, ' ');
  dict += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xff);
  bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict;
  for (uint64_t t = 0; t < tokens; ++t) {
    const uint32_t v = static_cast<uint32_t>(t);
    bytes.append(reinterpret_cast<const char*>(&v), item_bytes);
  }
  test::write_bytes(dir.file(name), bytes.data(), bytes.size());
  return dir.file(name);
}

uint16_t first_token(const TokenFileSource& s, uint64_t i) {
  std::vector<std::byte> scratch;
  const RawSample r = s.read(i, scratch);
  uint16_t v = 0;
  std::memcpy(&v, r.bytes.data(), 2);
  return v;
}

TEST(TokenSet, WindowsNeverStraddleTwoFilesAndFollowTheFileOrder) {
  TempDir dir;
  const auto a = write_raw(dir, "a.bin", 41, 1000);  // (41-1)/10 = 4 windows, 1 token unused
  const auto b = write_raw(dir, "b.bin", 25, 2000);  // 2 windows, 4 unused
  const auto c = write_raw(dir, "c.bin", 11, 3000);  // 1 window
  const TokenFileSource set({a, b, c}, 10);
  ASSERT_EQ(set.size(), 7u);
  EXPECT_EQ(set.files(), 3u);
  EXPECT_EQ(set.tokens(), 77u);
  const std::vector<uint16_t> want = {1000, 1010, 1020, 1030, 2000, 2010, 3000};
  std::vector<std::byte> scratch;
  for (uint64_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(first_token(set, i), want[i]) << "window " << i;
    const RawSample r = set.read(i, scratch);
    uint16_t last = 0;
    std::memcpy(&last, r.bytes.data() + 20, 2);
    EXPECT_EQ(last, want[i] + 10) << "window " << i << " ends in its own file";
  }
  EXPECT_EQ(set.location(5), b + "@20");
  EXPECT_NE(set.describe().find("token set of 3 files"), std::string::npos);
}

TEST(FaultsTokenSet, AFolderIsItsFilesInNameOrderWithoutHiddenOnes) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("corpus"));
  write_raw(dir, "corpus/train_001.bin", 21, 200);
  write_raw(dir, "corpus/train_000.bin", 21, 100);
  write_raw(dir, "corpus/.partial.bin", 3, 0);
  const TokenFileSource set({dir.file("corpus")}, 10);
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(first_token(set, 0), 100);
  EXPECT_EQ(first_token(set, 2), 200);
  std::filesystem::create_directories(dir.file("empty"));
  EXPECT_NE(error_of([&] { TokenFileSource({dir.file("empty")}, 10); }).find("without token files"),
            std::string::npos);
  EXPECT_NE(error_of([&] { TokenFileSource({dir.file("nope")}, 10); }).find("no such token file"),
            std::string::npos);
}

// Hypothesis found it (python.hypothesis_api, a folder holding a link to itself): listing the
// folder raised a bare std::filesystem_error ("status: Too many levels of symbolic links").
TEST(FaultsTokenSet, ALinkToItselfInAFolderIsAnErrorNamingIt) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("corpus"));
  write_raw(dir, "corpus/train_000.bin", 21, 100);
  std::filesystem::create_symlink("loop.bin", dir.file("corpus/loop.bin"));
  const std::string error = error_of([&] { TokenFileSource({dir.file("corpus")}, 10); });
  EXPECT_NE(error.find(dir.file("corpus/loop.bin") + ": cannot be read: Too many levels of "
                                                     "symbolic links"),
            std::string::npos)
      << error;
  // A dangling link is no file: passed over, as before.
  std::filesystem::remove(dir.file("corpus/loop.bin"));
  std::filesystem::create_symlink("gone.bin", dir.file("corpus/dangling.bin"));
  EXPECT_EQ(TokenFileSource({dir.file("corpus")}, 10).size(), 2u);
}

TEST(TokenSet, NpyHeadersGiveTheTokenType) {
  TempDir dir;
  const auto a = write_npy(dir, "a.npy", "<u4", 33, 4);
  const auto b = write_npy(dir, "b.npy", "<u4", 17, 4);
  const TokenFileSource set({a, b}, 8);
  EXPECT_EQ(set.dtype(), DType::U32);
  EXPECT_EQ(set.size(), 4u + 2u);
  std::vector<std::byte> scratch;
  const RawSample r = set.read(4, scratch);  // b's first window
  uint32_t v = 1;
  std::memcpy(&v, r.bytes.data(), 4);
  EXPECT_EQ(v, 0u);
  const auto u16 = write_npy(dir, "c.npy", "<u2", 17, 2);
  EXPECT_EQ(TokenFileSource({u16}, 8).dtype(), DType::U16);
}

TEST(FaultsTokenSet, MixedTokenTypesNameTheFirstFileThatDiffers) {
  TempDir dir;
  const auto a = write_npy(dir, "a.npy", "<u2", 33, 2);
  const auto b = write_npy(dir, "b.npy", "<u2", 33, 2);
  const auto c = write_npy(dir, "c.npy", "<u4", 33, 4);
  const auto d = write_npy(dir, "d.npy", "<u4", 33, 4);
  std::string e = error_of([&] { TokenFileSource({a, b, c, d}, 8); });
  EXPECT_EQ(e.rfind(c + ": holds uint32 tokens, but " + a + " holds uint16", 0), 0u) << e;
  e = error_of([&] { TokenFileSource({a}, 8, DType::U32); });
  EXPECT_NE(e.find("the set was asked for uint32"), std::string::npos) << e;
  const auto f = write_npy(dir, "f.npy", "<f4", 33, 4);
  e = error_of([&] { TokenFileSource({f}, 8); });
  EXPECT_NE(e.find("of type '<f4', not uint16 or uint32"), std::string::npos) << e;
}

TEST(FaultsTokenSet, ResumingOnAChangedSetIsAClearError) {
  TempDir dir;
  const auto a = write_raw(dir, "a.bin", 641, 0);
  const auto b = write_raw(dir, "b.bin", 641, 0);
  auto copy = std::make_shared<CopyTransform>(SampleSpec{DType::U16, {11}});
  Loader before(std::make_shared<TokenFileSource>(std::vector<std::string>{a, b}, 10), copy,
                test::test_options(8, 1));
  before.start_epoch();
  ASSERT_TRUE(before.next());
  const SamplerState st = before.state();
  write_raw(dir, "b.bin", 651, 0);  // b grew by 10 tokens: one more window
  write_raw(dir, "c.bin", 641, 0);
  const auto changed = [&](std::vector<std::string> files) {
    Loader after(std::make_shared<TokenFileSource>(files, 10), copy, test::test_options(8, 1));
    return error_of([&] { after.restore(st); });
  };
  EXPECT_NE(changed({a, b}).find("is from a dataset of 128 samples"), std::string::npos);
  write_raw(dir, "b.bin", 641, 0);
  EXPECT_NE(changed({a, dir.file("c.bin")}).find("fingerprint"), std::string::npos)
      << "the same number of windows, another file";
  EXPECT_EQ(changed({a, b}), "(no error)");
}

}  // namespace
