// Where the dataset lives: a network or userspace file system (statfs f_type), or a
// spinning disk (the block device's queue/rotational in sysfs).
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {

namespace fs = std::filesystem;

std::optional<std::string> network_fs_name(uint64_t f_type) {
  // Magic numbers from linux/magic.h and the file systems' own sources.
  static const std::pair<uint64_t, const char*> kNetwork[] = {
      {0x6969, "NFS"},          {0x517B, "SMB"},        {0xFF534D42, "CIFS/SMB"},
      {0xFE534D42, "SMB2"},     {0x0BD00BD0, "Lustre"}, {0x47504653, "GPFS"},
      {0x19830326, "BeeGFS"},   {0x65735546, "FUSE"},   {0x00C36400, "CephFS"},
      {0x5346414F, "AFS"},      {0x6B414653, "AFS"},    {0x01021997, "9p"},
      {0x20030528, "OrangeFS"}, {0xAAD7AAEA, "PanFS"},  {0x564C, "NCP"},
      {0x7461636F, "OCFS2"},    {0x01161970, "GFS2"},
  };
  for (const auto& [magic, name] : kNetwork)
    if (magic == f_type) return std::string(name);
  return std::nullopt;
}

std::optional<BlockDevice> block_device(const std::string& sys_root, unsigned major,
                                        unsigned minor) {
  if (major == 0) return std::nullopt;  // anonymous devices: tmpfs, overlay, btrfs, NFS
  std::error_code ec;
  fs::path dev = fs::canonical(
      fs::path(sys_root) / "dev" / "block" / (std::to_string(major) + ":" + std::to_string(minor)),
      ec);
  if (ec) return std::nullopt;
  // A partition (it has a `partition` file) has no queue of its own: its disk is the parent.
  if (fs::exists(dev / "partition", ec) && !fs::exists(dev / "queue", ec)) dev = dev.parent_path();
  const auto line = read_first_line((dev / "queue" / "rotational").string());
  const auto rotational = line ? values::parse_whole(*line, 0, 1) : std::nullopt;
  if (!rotational) return std::nullopt;
  return BlockDevice{dev.filename().string(), *rotational == 1};
}

Finding storage_finding(const std::string& dataset, uint64_t f_type,
                        const std::optional<BlockDevice>& device) {
  Finding f{"storage", Severity::Ok, "", ""};
  if (auto net = network_fs_name(f_type)) {
    f.severity = Severity::Warn;
    f.message = dataset + " is on " + *net +
                ": every worker's read pays network latency, and many concurrent readers "
                "per node contend on the client";
    f.fix =
        "stage the dataset to local NVMe or /dev/shm first, or use the netfs profile "
        "(--stoker-profile=netfs: fewer readers, tar shards streamed)";
    return f;
  }
  if (!device) {
    f.severity = Severity::Info;
    char type[32];
    std::snprintf(type, sizeof type, "0x%llx", static_cast<unsigned long long>(f_type));
    f.message = dataset + " is on a local file system (type " + type +
                ") with no block device to inspect (tmpfs, overlay, btrfs): rotational unknown";
    return f;
  }
  if (device->rotational) {
    f.severity = Severity::Warn;
    f.message = dataset + " is on " + device->name +
                ", which reports itself rotational (a spinning disk, or a virtual disk that "
                "does not say otherwise): random reads by many workers seek";
    f.fix =
        "copy the dataset to SSD/NVMe or /dev/shm, or pack it into large sequential shards "
        "(tar shards, token files) and use the netfs profile (fewer readers, shards streamed "
        "in 4 MiB reads)";
    return f;
  }
  f.message = dataset + " is on " + device->name + ", local and not rotational (SSD/NVMe)";
  return f;
}

Finding check_storage(const std::string& dataset, const std::string& sys_root) {
  struct statfs sf {};
  struct stat st {};
  if (statfs(dataset.c_str(), &sf) != 0 || stat(dataset.c_str(), &st) != 0) {
    return {"storage", Severity::Error,
            "cannot read the dataset " + dataset + ": " + std::strerror(errno),
            "check the --dataset path and its permissions"};
  }
  return storage_finding(dataset, static_cast<uint32_t>(sf.f_type),
                         block_device(sys_root, major(st.st_dev), minor(st.st_dev)));
}

}  // namespace stoker::doctor
