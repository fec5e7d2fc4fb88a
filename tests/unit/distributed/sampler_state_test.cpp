#include <gtest/gtest.h>

#include "stoker/common/error.hpp"
#include "stoker/distributed/sampler.hpp"

using stoker::SamplerState;

namespace {
std::string parse_error(const std::string& text) {
  try {
    SamplerState::parse(text);
  } catch (const stoker::Error& e) {
    return e.what();
  }
  return "no error";
}
const std::string kExpected =
    " (expected: stoker-sampler v2 seed=S epoch=E consumed=C size=N fingerprint=0xF "
    "shuffle=0|1 block=B group=G [buffer=S phases=W:C,...] [ra_reps=N])";
}  // namespace

TEST(SamplerState, TextRoundTrip) {
  SamplerState s;
  s.seed = 18446744073709551615ULL;
  s.epoch = 3;
  s.consumed = 12345;
  s.size = 1000000000;
  s.fingerprint = 0xdeadbeef12345678ULL;
  s.shuffle = false;
  s.block = 64;
  s.group = 16;
  const std::string text = s.to_string();
  EXPECT_EQ(text,
            "stoker-sampler v2 seed=18446744073709551615 epoch=3 consumed=12345 size=1000000000 "
            "fingerprint=0xdeadbeef12345678 shuffle=0 block=64 group=16");
  const SamplerState back = SamplerState::parse(text);
  EXPECT_EQ(back.to_string(), text);
  EXPECT_EQ(back.seed, s.seed);
  EXPECT_EQ(back.fingerprint, s.fingerprint);
  EXPECT_FALSE(back.shuffle);
  // Keys in any order, extra blanks and a trailing newline are fine.
  EXPECT_EQ(SamplerState::parse("  stoker-sampler v2 group=16 block=64 shuffle=0 "
                                "fingerprint=0xdeadbeef12345678 size=1000000000 consumed=12345 "
                                "epoch=3 seed=18446744073709551615\n")
                .to_string(),
            text);
}

TEST(SamplerState, MalformedTextIsAClearError) {
  const std::string ok_tail =
      " epoch=1 consumed=2 size=3 fingerprint=0x4 shuffle=1 block=0 group=0";
  EXPECT_EQ(parse_error(""), "sampler state '': does not start with 'stoker-sampler'" + kExpected);
  EXPECT_EQ(parse_error("stoker-sampler seed=1"),
            "sampler state 'stoker-sampler seed=1': has no format version (v2) after "
            "'stoker-sampler'" +
                kExpected);
  EXPECT_EQ(parse_error("stoker-sampler v3 seed=1" + ok_tail),
            "sampler state: format version 3 is not readable; this build reads versions 1 to 2 "
            "(resume with the stoker version that wrote the state, or restart the epoch)");
  EXPECT_EQ(SamplerState::parse("stoker-sampler v1 seed=1" + ok_tail).version, 1u);
  const std::string bad_seed = "stoker-sampler v1 seed=x1" + ok_tail;
  EXPECT_EQ(parse_error(bad_seed),
            "sampler state '" + bad_seed + "': seed=x1 is not a whole number" + kExpected);
  const std::string missing =
      "stoker-sampler v1 epoch=1 consumed=2 size=3 fingerprint=0x4 "
      "shuffle=1 block=0 group=0";
  EXPECT_EQ(parse_error(missing),
            "sampler state '" + missing + "': key 'seed' is missing" + kExpected);
  const std::string twice = "stoker-sampler v1 seed=1 seed=1" + ok_tail;
  EXPECT_EQ(parse_error(twice),
            "sampler state '" + twice + "': key 'seed' appears twice" + kExpected);
  const std::string unknown = "stoker-sampler v1 seed=1 rank=0" + ok_tail;
  EXPECT_EQ(parse_error(unknown),
            "sampler state '" + unknown + "': unknown key 'rank'" + kExpected);
  const std::string overflow = "stoker-sampler v1 seed=18446744073709551616" + ok_tail;
  EXPECT_EQ(parse_error(overflow), "sampler state '" + overflow +
                                       "': seed=18446744073709551616 is not a whole number" +
                                       kExpected);
  const std::string negative = "stoker-sampler v1 seed=-1" + ok_tail;
  EXPECT_EQ(parse_error(negative),
            "sampler state '" + negative + "': seed=-1 is not a whole number" + kExpected);
  const std::string shuffle2 =
      "stoker-sampler v1 seed=1 epoch=1 consumed=2 size=3 "
      "fingerprint=0x4 shuffle=2 block=0 group=0";
  EXPECT_EQ(parse_error(shuffle2),
            "sampler state '" + shuffle2 + "': shuffle must be 0 or 1" + kExpected);
  const std::string no_eq = "stoker-sampler v1 seed" + ok_tail;
  EXPECT_EQ(parse_error(no_eq),
            "sampler state '" + no_eq + "': 'seed' is not key=value" + kExpected);
}
