// The strict JSON reader behind the run records and the job log: RFC 8259 text is read,
// anything else is refused with the byte where it went wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "stoker/common/json_scan.hpp"

using namespace stoker;

namespace {

bool valid(const std::string& text, int depth = 8) {
  std::string error;
  return scan_json(text, depth, &error).has_value();
}

}  // namespace

TEST(JsonScan, ReadsValuesWithTheirKeysAndDepths) {
  std::string error;
  const auto t =
      scan_json(R"({"a":1,"b":[2.5,-3e2,"x\n\u00e9"],"c":{"d":true,"e":null}})", 4, &error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->size(), 12u);
  EXPECT_EQ((*t)[0].close, 11);
  EXPECT_EQ((*t)[1].key, "a");
  EXPECT_EQ(json_whole((*t)[1]), 1u);
  EXPECT_EQ((*t)[2].kind, JsonToken::ArrayStart);
  EXPECT_EQ((*t)[2].close, 6);
  EXPECT_EQ(json_number((*t)[3]), 2.5);
  EXPECT_EQ(json_number((*t)[4]), -300.0);
  EXPECT_FALSE(json_whole((*t)[4]));
  EXPECT_EQ(json_string((*t)[5]), "x\n\xc3\xa9");
  EXPECT_EQ((*t)[8].depth, 2);
  EXPECT_EQ((*t)[8].key, "d");
}

TEST(JsonScan, ResolvesSurrogatePairs) {
  const auto t = scan_json(R"(["\ud83d\ude00","\ud800"])", 2, nullptr);
  ASSERT_TRUE(t);
  EXPECT_EQ(json_string((*t)[1]), "\xf0\x9f\x98\x80");
  EXPECT_EQ(json_string((*t)[2]), "\xef\xbf\xbd");
}

TEST(FaultsJsonScan, RefusesWhatIsNotJson) {
  for (const std::string bad : {"",
                                "{",
                                "{\"a\":}",
                                "{\"a\":1,}",
                                "[1 2]",
                                "{\"a\" 1}",
                                "01",
                                "1.",
                                "1e",
                                "-",
                                "tru",
                                "\"abc",
                                "\"a\x01\"",
                                "\"\\x\"",
                                "\"\\u12g4\"",
                                "{\"a\\n\":1}",
                                "{} {}",
                                "\"\xff\"",
                                "\"\xc3\"",
                                "\"\xed\xa0\x80\"",
                                "\"\xc0\xaf\"",
                                "NaN",
                                "[1,]"}) {
    std::string error;
    EXPECT_FALSE(scan_json(bad, 8, &error)) << bad;
    EXPECT_NE(error.find("at byte"), std::string::npos) << bad;
  }
}

TEST(FaultsJsonScan, RefusesDeepNestingWithoutRecursingIntoIt) {
  EXPECT_TRUE(valid("[[[1]]]", 3));
  EXPECT_FALSE(valid("[[[[1]]]]", 3));
  EXPECT_FALSE(valid(std::string(100000, '['), 64));
}

TEST(JsonScan, AcceptsWhitespaceAndUtf8) {
  EXPECT_TRUE(valid(" { \"a\" : [ 1 , 2 ] , \"b\":\"\xe2\x82\xac\xf0\x9f\x98\x80\" } \n"));
  EXPECT_TRUE(valid("0"));
  EXPECT_TRUE(valid("-0.5e+3"));
}

TEST(JsonScan, ValuesBelowTheKeptDepthAreCheckedButGetNoTokens) {
  std::vector<JsonToken> t;
  ASSERT_TRUE(scan_json_into(R"({"a":1,"tl":[[1,2],[3,4]]})", 4, t, nullptr, 1));
  ASSERT_EQ(t.size(), 5u);  // {, a, [ ], }: the points are skipped
  EXPECT_EQ(t[2].kind, JsonToken::ArrayStart);
  EXPECT_EQ(t[2].close, 3);
  std::string error;
  EXPECT_FALSE(scan_json_into(R"({"a":1,"tl":[[1,2],[3,]]})", 4, t, &error, 1)) << "still checked";
}

// The scanner against nlohmann::json's RFC 8259 parser, on many damaged copies of a job log
// line: both accept or both refuse. (Texts with a '\' are left out: the two differ, by
// design, on escapes in member names and on lone surrogates; nlohmann also refuses numbers
// past a double's range, which stoker's readers refuse later, naming the key.)
TEST(FaultsJsonScan, AgreesWithAnotherParserOnDamagedLines) {
  const std::string line =
      R"({"time":"2026-12-02T10:00:00Z","job":"1000","rank":0,"record":{"v":1,"pin":false,)"
      R"("gpu":"","seconds":600.5,"wait_share":0.5134,"x":null,"t":true,"n":-1.5e-3,)"
      R"("timeline":[[12.5,0.256718,4],[25.0,0.267415,5],[]],"o":{}}} )";
  const std::string structural = "{}[]\",:0123456789.eE+-tfnul \x01\x7f\xc3\xa9\xff";
  std::mt19937 random(7);
  int both_ok = 0, both_refuse = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = line;
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = random() % text.size();
      const char c = structural[random() % structural.size()];
      switch (random() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.erase(at, 1 + random() % 4);
          break;
        default:
          text.insert(at, 1, c);
      }
    }
    if (text.find('\\') != std::string::npos) continue;
    bool theirs = true;
    try {
      const nlohmann::json parsed = nlohmann::json::parse(text);
      theirs = !parsed.is_discarded();
    } catch (const nlohmann::json::out_of_range&) {
      continue;  // a number past a double's range ("0.2e6718"): JSON, refused by nlohmann
    } catch (const nlohmann::json::parse_error&) {
      theirs = false;
    }
    const bool ours = valid(text, 64);
    EXPECT_EQ(ours, theirs) << text;
    (ours ? both_ok : both_refuse) += 1;
  }
  EXPECT_GT(both_ok, 1000);  // the damage left many lines valid, and broke many
  EXPECT_GT(both_refuse, 1000);
}
