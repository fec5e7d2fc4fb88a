#include "rendezvous.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace stoker::spank {
namespace {

TEST(FirstHost, ExpandsTheFirstEntry) {
  EXPECT_EQ(first_host("n[1-2]"), "n1");
  EXPECT_EQ(first_host("gpu[07-09,12],login1"), "gpu07");
  EXPECT_EQ(first_host("node5,node6"), "node5");
  EXPECT_EQ(first_host("r[3,5]n[01-04]"), "r3n01");
  EXPECT_EQ(first_host("rack[2-3]-ib"), "rack2-ib");
  EXPECT_EQ(first_host(""), "");
}

TEST(MasterAddress, ResolvableNameOrThisHost) {
  EXPECT_EQ(master_address("localhost,n2"), "localhost");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(master_address("no-such-node-stoker[1-2]"), host);
}

TEST(MasterPort, UnprivilegedAndStablePerJob) {
  EXPECT_EQ(master_port(0), 20000);
  EXPECT_EQ(master_port(12345), 32345);
  EXPECT_EQ(master_port(20000), 20000);
  EXPECT_EQ(master_port(4294967295u), 20000 + 4294967295u % 20000);
  for (uint32_t j : {1u, 19999u, 777777u}) {
    EXPECT_GE(master_port(j), 20000);
    EXPECT_LT(master_port(j), 40000);
  }
}

}  // namespace
}  // namespace stoker::spank
