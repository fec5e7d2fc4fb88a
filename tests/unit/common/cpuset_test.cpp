#include <gtest/gtest.h>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/error.hpp"

using stoker::CpuSet;

TEST(CpuSet, ParsesAndPrintsRanges) {
  CpuSet s = CpuSet::parse("0-3,8,10-11");
  EXPECT_EQ(s.count(), 7);
  EXPECT_EQ(s.to_string(), "0-3,8,10-11");
  EXPECT_EQ(CpuSet::parse("5,4,3").to_string(), "3-5");
  EXPECT_EQ(CpuSet::parse("").to_string(), "");
  EXPECT_EQ(CpuSet::parse("130,0").list(), (std::vector<int>{0, 130}));
}

TEST(CpuSet, RejectsMalformedLists) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", "99999999", "1.5"}) {
    EXPECT_THROW(CpuSet::parse(bad, "--cpus"), stoker::Error) << bad;
  }
  try {
    CpuSet::parse("1-x", "--cpus");
  } catch (const stoker::Error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "--cpus: malformed CPU list '1-x' at '1-x' (use OS CPU numbers and ranges such as 0-5,12)");
  }
}

TEST(CpuSet, SetAlgebra) {
  CpuSet a = CpuSet::range(0, 7), b = CpuSet::parse("4-11");
  EXPECT_EQ((a & b).to_string(), "4-7");
  EXPECT_EQ((a | b).to_string(), "0-11");
  EXPECT_EQ((a - b).to_string(), "0-3");
  EXPECT_TRUE((a & b).is_subset_of(a));
  EXPECT_FALSE(a.is_subset_of(b));
  EXPECT_EQ(a - a, CpuSet());
  EXPECT_EQ((a - a).first(), -1);
  EXPECT_EQ(b.first(), 4);
  CpuSet c = CpuSet::range(60, 70);
  c.clear(70);
  c.clear(64);
  EXPECT_EQ(c.to_string(), "60-63,65-69");
}
