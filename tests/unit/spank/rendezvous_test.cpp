#include "rendezvous.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

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

TEST(MasterAddress, TheFirstNodesNodeAddrElseItsName) {
  const NodeAddrLookup slurm = [](const std::string& node) -> std::optional<std::string> {
    if (node == "n1") return "10.1.2.3";
    return std::nullopt;
  };
  EXPECT_EQ(master_address("n[1-2]", slurm), "10.1.2.3");
  EXPECT_EQ(master_address("n1,n2", slurm), "10.1.2.3");
  EXPECT_EQ(master_address("", slurm), "");
}

// The fault: a first node whose name did not resolve made each node fall back to its own
// hostname, so the ranks of one step got different MASTER_ADDRs and hung. Now a node that
// cannot learn the NodeAddr uses the name itself, which is what every node can compute.
TEST(FaultsRendezvous, MasterAddressIsNeverThisHostsName) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const NodeAddrLookup none = [](const std::string&) { return std::nullopt; };
  EXPECT_EQ(master_address("no-such-node-stoker[1-2]", none), "no-such-node-stoker1");
  EXPECT_EQ(master_address("no-such-node-stoker[1-2]", nullptr), "no-such-node-stoker1");
  const NodeAddrLookup empty = [](const std::string&) { return std::string(); };
  EXPECT_EQ(master_address("gpu[07-09]", empty), "gpu07");
  EXPECT_NE(master_address("no-such-node-stoker[1-2]", none), host);
}

TEST(MasterPort, UnprivilegedAndBelowTheEphemeralRange) {
  EXPECT_EQ(master_port(0, 0), kPortBase);
  EXPECT_EQ(kPortBase + kJobGroups * kStepSlots, 32768);
  for (uint32_t job : {0u, 1u, 398u, 399u, 12345u, 777777u, 4294967295u}) {
    for (uint32_t step : {0u, 1u, 28u, 29u, 1000u, 0xfffffffau, 0xfffffffbu, 0xfffffffcu}) {
      const int port = master_port(job, step);
      EXPECT_GE(port, 20000) << job << "." << step;
      EXPECT_LT(port, 32768) << job << "." << step;
      EXPECT_EQ(port, master_port(job, step)) << "every rank computes the same";
    }
  }
  EXPECT_NE(master_port(12345, 0), master_port(12346, 0)) << "consecutive jobs";
}

// The fault: MASTER_PORT = 20000 + job id % 20000 ignored the step, so two concurrent steps
// of one job (srun ... & srun ... & wait) got one port and the second rank 0 could not bind.
TEST(FaultsRendezvous, ConcurrentStepsOfOneJobGetDifferentPorts) {
  for (uint32_t job : {1u, 12345u, 4294967295u}) {
    std::set<int> ports;
    for (uint32_t step = 0; step < 29; ++step) ports.insert(master_port(job, step));
    for (uint32_t special : {0xfffffffau, 0xfffffffbu, 0xfffffffcu})
      ports.insert(master_port(job, special));
    EXPECT_EQ(ports.size(), 32u) << "job " << job;
    // Steps far apart in id still differ from their neighbours.
    EXPECT_NE(master_port(job, 100), master_port(job, 101));
  }
}

}  // namespace
}  // namespace stoker::spank
