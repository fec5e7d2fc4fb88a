// The C interface as a caller in any language sees it (stoker_c.h): statuses and the error
// text, JSON in and out, objects of the wrong kind, bytes that are not UTF-8, and a wait for a
// batch in slices that consumes nothing until the batch is there.
#include "stoker_c.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "temp_tree.hpp"

namespace {

using nlohmann::json;

struct Called {
  int status = 0;
  json value;
  std::string data, error;
  stoker_object* object = nullptr;
};

Called call(const std::string& name, const json& args = json::object(), std::string data = {},
            std::vector<stoker_object*> objects = {}) {
  const std::string text = args.dump();
  stoker_args a{text.data(), text.size(),    data.empty() ? nullptr : data.data(),
                data.size(), objects.data(), objects.size()};
  stoker_out out{};
  Called c;
  c.status = stoker_call(name.c_str(), &a, &out);
  if (c.status != STOKER_OK) {
    size_t n = 0;
    const char* e = stoker_last_error(&n);
    c.error.assign(e, n);
    return c;
  }
  if (out.json) c.value = json::parse(std::string(out.json, out.json_len));
  if (out.data) c.data.assign(out.data, out.data_len);
  stoker_free(out.json);
  stoker_free(out.data);
  c.object = out.object;
  return c;
}

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {d[c >> 4], d[c & 15]};
  return out;
}

// A token file of `n` uint16 tokens 0, 1, 2, ...
std::string write_tokens(const std::string& folder, uint64_t n) {
  const std::string path = folder + "/tokens.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  for (uint64_t i = 0; i < n; ++i) {
    const auto t = static_cast<uint16_t>(i);
    std::fwrite(&t, sizeof t, 1, f);
  }
  std::fclose(f);
  return path;
}

json token_loader(const std::string& path) {
  return {
      {"kind", "tokens"},
      {"source", {{"paths", {hex(path)}}, {"seq_len", 64}, {"dtype", nullptr}, {"widen", false}}},
      {"loader", {{"batch_size", 4}, {"world_size", 1}, {"rank", 0}, {"agree", false}}}};
}

}  // namespace

TEST(Capi, TheLibrarySaysItsInterfaceVersionAndFacts) {
  EXPECT_EQ(stoker_abi(), STOKER_ABI);
  const Called info = call("info");
  ASSERT_EQ(info.status, STOKER_OK) << info.error;
  EXPECT_EQ(info.value["abi"], STOKER_ABI);
  EXPECT_FALSE(info.value["loader_fields"].empty());
  EXPECT_FALSE(info.value["image_fields"].empty());
}

TEST(FaultsCapi, AnUnknownCallOrAnObjectOfAnotherKindIsATypeError) {
  Called c = call("no_such_call");
  EXPECT_EQ(c.status, STOKER_TYPE_ERROR);
  EXPECT_NE(c.error.find("no_such_call"), std::string::npos);
  const Called sampler = call("sampler_new", {{"size", 10},
                                              {"world_size", 1},
                                              {"rank", 0},
                                              {"shuffle", false},
                                              {"seed", 0},
                                              {"drop_last", false}});
  ASSERT_EQ(sampler.status, STOKER_OK) << sampler.error;
  c = call("plan_info", json::object(), {}, {sampler.object});  // a sampler is no plan
  EXPECT_EQ(c.status, STOKER_TYPE_ERROR);
  EXPECT_NE(c.error.find("expected a plan"), std::string::npos) << c.error;
  stoker_object_free(sampler.object);
}

TEST(FaultsCapi, ARuntimeErrorIsStokerErrorWithItsTextAndABadValueAValueError) {
  Called c = call("loader_open", token_loader("/nonexistent/tokens.bin"));
  EXPECT_EQ(c.status, STOKER_ERROR);
  EXPECT_NE(c.error.find("/nonexistent/tokens.bin"), std::string::npos) << c.error;
  json bad = token_loader("/nonexistent/tokens.bin");
  bad["loader"]["workers"] = 0;  // below its row's minimum: named, before any file is read
  c = call("loader_open", bad);
  EXPECT_EQ(c.status, STOKER_VALUE_ERROR);
  EXPECT_NE(c.error.find("workers=0"), std::string::npos) << c.error;
}

TEST(FaultsCapi, BytesOfAFileNameThatAreNotUtf8ComeBackEscapedNotBroken) {
  const std::string name = "/nonexistent/caf\xe9\xff.bin";  // Latin-1, not UTF-8
  const Called c = call("loader_open", token_loader(name));
  ASSERT_EQ(c.status, STOKER_ERROR);
  EXPECT_NE(c.error.find("/nonexistent/caf\\xe9\\xff.bin"), std::string::npos) << c.error;
  EXPECT_NO_THROW((void)json(c.error).dump());  // valid UTF-8 now
}

TEST(Capi, AWaitInSlicesConsumesNothingUntilTheBatchIsThere) {
  stoker::test::TempTree dir;
  const std::string path = write_tokens(dir.root(), 64 * 40 + 1);
  const Called opened = call("loader_open", token_loader(path));
  ASSERT_EQ(opened.status, STOKER_OK) << opened.error;
  uint64_t samples = 0, batches = 0;
  for (;;) {
    stoker_batch b{};
    const int status = stoker_loader_next(opened.object, 1'000'000, &b);  // 1 ms slices
    if (status == STOKER_NOT_YET) continue;
    if (status == STOKER_END) break;
    ASSERT_EQ(status, STOKER_OK) << stoker_last_error(nullptr);
    ASSERT_NE(b.data, nullptr);
    EXPECT_EQ(b.number, batches);
    samples += b.size;
    ++batches;
    stoker_batch_release(b.handle);
  }
  EXPECT_EQ(samples, 40u);
  EXPECT_EQ(batches, 10u);
  stoker_object_free(opened.object);
}

TEST(FaultsCapi, ABatchOutlivesItsLoader) {
  stoker::test::TempTree dir;
  const Called opened = call("loader_open", token_loader(write_tokens(dir.root(), 64 * 8 + 1)));
  ASSERT_EQ(opened.status, STOKER_OK) << opened.error;
  stoker_batch b{};
  ASSERT_EQ(stoker_loader_next(opened.object, -1, &b), STOKER_OK);
  stoker_object_free(opened.object);  // the loader goes first
  EXPECT_EQ(b.size, 4u);
  stoker_batch_release(b.handle);
}
