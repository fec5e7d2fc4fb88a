// Slurm GPU ids -> topology GPUs, through fake /proc/driver/nvidia trees and PCI order.
#include <gtest/gtest.h>

#include "stoker/topology/gpu_identity.hpp"
#include "temp_tree.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

class GpuIdentity : public ::testing::Test {
 protected:
  // DGX-like: GPUs 0..7 in PCI order 07, 0f, 47, 4e, 87, 90, b7, bd.
  Topology topo = load_topology_xml_text(test::dgx_a100_like(), "dgx");
};

void write_info(const test::TempTree& t, const std::string& bus, int minor) {
  t.write("gpus/" + bus + "/information",
          "Model: \t\t NVIDIA A100-SXM4-40GB\nIRQ:   \t\t 42\nGPU UUID: \t GPU-1234\n"
          "Video BIOS: \t 92.00.19.00.01\nBus Type: \t PCIe\nDMA Size: \t 47 bits\n"
          "Bus Location: \t " +
              bus + "\nDevice Minor: \t " + std::to_string(minor) + "\n");
}

TEST_F(GpuIdentity, ReadsDeviceMinors) {
  test::TempTree t;
  write_info(t, "0000:07:00.0", 3);
  write_info(t, "0000:BD:00.0", 0);  // the driver may print upper-case hex
  t.write("gpus/0000:99:00.0/information", "Model: no minor line here\n");
  auto minors = read_nvidia_device_minors(t.path("gpus"));
  ASSERT_EQ(minors.size(), 2u);
  EXPECT_EQ(minors.at(3), "0000:07:00.0");
  EXPECT_EQ(minors.at(0), "0000:bd:00.0");
  EXPECT_TRUE(read_nvidia_device_minors(t.path("absent")).empty());
}

TEST_F(GpuIdentity, PciOrderWithoutMinors) {
  GpuResolution r = resolve_gpu_ids(topo, "0,2", {});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.gpus, (std::vector<int>{0, 2}));
  r = resolve_gpu_ids(topo, " 7 , 1 ", {});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.gpus, (std::vector<int>{7, 1}));
  EXPECT_TRUE(resolve_gpu_ids(topo, "", {}).gpus.empty());
  EXPECT_TRUE(resolve_gpu_ids(topo, "", {}).ok());
}

TEST_F(GpuIdentity, MinorsDecideWhichGpu) {
  test::TempTree t;
  write_info(t, "0000:bd:00.0", 0);  // /dev/nvidia0 is the last GPU in PCI order
  write_info(t, "0000:07:00.0", 1);
  auto minors = read_nvidia_device_minors(t.path("gpus"));
  GpuResolution r = resolve_gpu_ids(topo, "0,1", minors);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.gpus, (std::vector<int>{7, 0}));
  EXPECT_EQ(topo.gpus[r.gpus[0]].pci_bus_id, "0000:bd:00.0");
}

TEST_F(GpuIdentity, MinorNotInTopology) {
  std::map<int, std::string> minors{{0, "0000:55:00.0"}};
  GpuResolution r = resolve_gpu_ids(topo, "0", minors);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(r.error,
            "cannot locate GPU 0: device minor 0 is PCI 0000:55:00.0, which is not an NVIDIA GPU "
            "in the topology (dgx)");
  r = resolve_gpu_ids(topo, "4", minors);
  EXPECT_EQ(r.error,
            "cannot locate GPU 4: the NVIDIA driver lists no device minor 4 (it has 1 GPUs)");
}

TEST_F(GpuIdentity, UuidStyleIdsAreRefusedClearly) {
  for (const char* id : {"GPU-8a1f2c3d-0000-1111-2222-333344445555", "MIG-GPU-8a1f/1/0"}) {
    GpuResolution r = resolve_gpu_ids(topo, std::string("0,") + id, {});
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.gpus.empty());
    EXPECT_EQ(r.error, std::string("cannot locate GPU ") + id +
                           ": UUID-style ids are not supported, only integer indices");
  }
}

TEST_F(GpuIdentity, IdsNotOnTheNode) {
  EXPECT_EQ(resolve_gpu_ids(topo, "8", {}).error,
            "cannot locate GPU 8: the node has 8 NVIDIA GPUs (ids: 0-7)");
  Topology cpu = load_topology_xml_text(test::cpu_only_single_numa(4, false));
  EXPECT_EQ(resolve_gpu_ids(cpu, "0", {}).error,
            "cannot locate GPU 0: the node has 0 NVIDIA GPUs (it has none)");
  EXPECT_EQ(resolve_gpu_ids(topo, "1,x", {}).error,
            "cannot locate GPU 'x': not a GPU index (expected integers such as 0,1)");
  EXPECT_EQ(resolve_gpu_ids(topo, "-1", {}).error,
            "cannot locate GPU '-1': not a GPU index (expected integers such as 0,1)");
  EXPECT_EQ(resolve_gpu_ids(topo, "1,,2", {}).error,
            "cannot locate GPU '': empty id in GPU list '1,,2'");
  EXPECT_EQ(resolve_gpu_ids(topo, "3,3", {}).error, "cannot locate GPU 3: listed twice in '3,3'");
  EXPECT_FALSE(resolve_gpu_ids(topo, "99999999999999999999", {}).ok());
}

TEST(GpuForLocalRank, WrapsAroundTheVisibleList) {
  EXPECT_EQ(gpu_for_local_rank({}, 0), -1);
  EXPECT_EQ(gpu_for_local_rank({5}, 3), 5);
  EXPECT_EQ(gpu_for_local_rank({4, 6}, 0), 4);
  EXPECT_EQ(gpu_for_local_rank({4, 6}, 3), 6);
  EXPECT_EQ(gpu_for_local_rank({4, 6}, -1), -1);
}

}  // namespace
}  // namespace stoker
