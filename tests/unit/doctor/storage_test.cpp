// Dataset storage: network file systems by statfs type, rotational disks through a crafted
// sysfs tree (a partition and a whole disk) and through this machine's real sysfs.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

#include "doctor_fixture.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {
namespace {

using test::DoctorDir;

TEST(Storage, NetworkTypesAreNamed) {
  EXPECT_EQ(network_fs_name(0x6969), "NFS");
  EXPECT_EQ(network_fs_name(0x0BD00BD0), "Lustre");
  EXPECT_EQ(network_fs_name(0x47504653), "GPFS");
  EXPECT_EQ(network_fs_name(0x19830326), "BeeGFS");
  EXPECT_EQ(network_fs_name(0xFF534D42), "CIFS/SMB");
  EXPECT_EQ(network_fs_name(0x65735546), "FUSE");
  EXPECT_FALSE(network_fs_name(0xEF53).has_value());      // ext4
  EXPECT_FALSE(network_fs_name(0x01021994).has_value());  // tmpfs
}

TEST(Storage, NetworkDatasetWarnsWhateverTheDisk) {
  Finding f = storage_finding("/data/imagenet", 0x6969, std::nullopt);
  EXPECT_EQ(f.check, "storage");
  EXPECT_EQ(f.severity, Severity::Warn);
  EXPECT_NE(f.message.find("NFS"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("netfs"), std::string::npos) << f.fix;
  EXPECT_EQ(storage_finding("/d", 0x0BD00BD0, BlockDevice{"sda", false}).severity, Severity::Warn);
}

// A sysfs tree as the kernel lays it out: /sys/dev/block/M:m links into /sys/devices, a
// partition is a folder inside its disk's, and only the disk has queue/.
void craft_sys(const DoctorDir& sys) {
  const std::string hdd = "devices/pci0000:00/0000:00:1f.2/ata1/host0/block/sda";
  const std::string nvme = "devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1";
  sys.write(hdd + "/queue/rotational", "1\n");
  sys.write(hdd + "/sda1/partition", "1\n");
  sys.write(nvme + "/queue/rotational", "0\n");
  sys.write(nvme + "/nvme0n1p2/partition", "2\n");
  std::filesystem::create_directories(sys.file("dev/block"));
  std::filesystem::create_directory_symlink("../../" + hdd, sys.file("dev/block/8:0"));
  std::filesystem::create_directory_symlink("../../" + hdd + "/sda1", sys.file("dev/block/8:1"));
  std::filesystem::create_directory_symlink("../../" + nvme + "/nvme0n1p2",
                                            sys.file("dev/block/259:2"));
}

TEST(Storage, CraftedSysfsFollowsPartitionsToTheirDisk) {
  DoctorDir sys;
  craft_sys(sys);
  auto disk = block_device(sys.path(), 8, 0);
  ASSERT_TRUE(disk.has_value());
  EXPECT_EQ(disk->name, "sda");
  EXPECT_TRUE(disk->rotational);
  auto part = block_device(sys.path(), 8, 1);
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->name, "sda");
  EXPECT_TRUE(part->rotational);
  auto ssd = block_device(sys.path(), 259, 2);
  ASSERT_TRUE(ssd.has_value());
  EXPECT_EQ(ssd->name, "nvme0n1");
  EXPECT_FALSE(ssd->rotational);
  EXPECT_FALSE(block_device(sys.path(), 8, 7).has_value());   // no such device
  EXPECT_FALSE(block_device(sys.path(), 0, 42).has_value());  // anonymous (tmpfs, overlay)

  EXPECT_EQ(storage_finding("/d", 0xEF53, part).severity, Severity::Warn);
  EXPECT_EQ(storage_finding("/d", 0xEF53, ssd).severity, Severity::Ok);
  EXPECT_EQ(storage_finding("/d", 0x01021994, std::nullopt).severity, Severity::Info);
}

TEST(Storage, RealDiskOfTheSourceTree) {
  const std::string path = STOKER_SOURCE_DIR;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  auto dev = block_device("/sys", major(st.st_dev), minor(st.st_dev));
  if (!dev) GTEST_SKIP() << path << " is on no block device (overlay, tmpfs, btrfs)";
  // The answer is the disk's own sysfs flag.
  std::ifstream in("/sys/block/" + dev->name + "/queue/rotational");
  int rotational = -1;
  ASSERT_TRUE(in >> rotational) << "/sys/block/" << dev->name;
  EXPECT_EQ(dev->rotational, rotational == 1);
  Finding f = check_storage(path);
  EXPECT_EQ(f.severity, dev->rotational ? Severity::Warn : Severity::Ok) << f.message;
  EXPECT_NE(f.message.find(dev->name), std::string::npos) << f.message;
}

TEST(Storage, MissingDatasetIsAnError) {
  Finding f = check_storage("/nonexistent/stoker/dataset");
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_NE(f.message.find("/nonexistent/stoker/dataset"), std::string::npos);
}

TEST(Storage, RealTmpfsHasNoDisk) {
  Finding f = check_storage("/dev/shm");
  if (f.severity == Severity::Error) GTEST_SKIP() << f.message;
  EXPECT_EQ(f.severity, Severity::Info) << f.message;
}

}  // namespace
}  // namespace stoker::doctor
