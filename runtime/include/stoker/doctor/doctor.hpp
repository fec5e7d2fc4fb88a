// `stoker doctor`: finds what silently starves data loaders (file limits, /dev/shm, CPU
// quota, memory, slow storage, SMT, far GPUs, a mixed Python stack) and says how to fix it.
//
// Every check is a function of its inputs (values, paths, roots) so tests can point it at
// crafted inputs; run_doctor() feeds the real ones of this process.
//
// Implemented in src/doctor/: cgroup_quota.cpp, cpu_checks.cpp, limit_checks.cpp,
// python_check.cpp, report.cpp, run_doctor.cpp, storage.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/enum_names.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::doctor {

// ok: nothing to do. info: worth knowing. warn: likely slows the loader.
// error: likely fails or starves it; `stoker doctor` exits 1 when any is found.
enum class Severity { Ok, Info, Warn, Error };
inline constexpr EnumName<Severity> kSeverityNames[] = {{Severity::Ok, "ok"},
                                                        {Severity::Info, "info"},
                                                        {Severity::Warn, "warn"},
                                                        {Severity::Error, "error"}};
inline const char* to_string(Severity s) {
  return name_of(kSeverityNames, s);
}

struct Finding {
  std::string check;  // "nofile", "shm", "cpu_quota", "memory", "storage", "smt", "gpu", "python"
  Severity severity = Severity::Ok;
  std::string message;  // what was found, with the numbers and what was assumed
  std::string fix;      // what to do; "" when nothing
};

struct Report {
  std::vector<Finding> findings;
  int count(Severity s) const;
  int exit_code() const;     // 0 without error findings, else 1
  std::string text() const;  // one line per finding, its fix below it
  // {"findings": [{"check","severity","message","fix"}...],
  //  "summary": {"ok","info","warn","error","exit_code"}}
  std::string json() const;
};

// --- open files -----------------------------------------------------------------------
// Files a loader worker may hold open at once (a shard, its index, a decoder's handles,
// PyTorch's shared-memory fds), and what the rest of the process needs (stdio, MPI,
// CUDA, sockets). Assumptions, stated in the finding.
inline constexpr int kFilesPerWorker = 16;
inline constexpr int kProcessFiles = 64;
// error when soft < workers x files_per_worker + kProcessFiles.
Finding check_open_files(uint64_t soft_limit, uint64_t hard_limit, int workers,
                         int files_per_worker = kFilesPerWorker);

// --- /dev/shm -------------------------------------------------------------------------
// PyTorch DataLoader worker processes pass every batch through /dev/shm.
inline constexpr uint64_t kMinShmBytes = uint64_t{1} << 30;
struct FsSpace {
  uint64_t size = 0, available = 0;
};
// statvfs of `path`; nullopt when it does not exist or cannot be read.
std::optional<FsSpace> filesystem_space(const std::string& path);
// warn when missing, smaller than kMinShmBytes or than 2 x the prefetch budget.
Finding check_shm(const std::string& path, const std::optional<FsSpace>& space,
                  uint64_t prefetch_budget);

// --- CPU quota ------------------------------------------------------------------------
// This process's cgroup CPU quota in CPUs (cgroup v2 cpu.max, v1 cpu.cfs_quota_us /
// cpu.cfs_period_us; the smallest over the cgroup and its ancestors). nullopt = no quota.
// `root` ("/" live) holds proc/self/cgroup, proc/self/mountinfo and the cgroup files.
std::optional<double> cgroup_cpu_quota(const std::string& root = "/");
// warn when the quota is below the CPUs of the mask: the threads are throttled.
Finding check_cpu_quota(std::optional<double> quota_cpus, int granted_cpus);

// --- memory ---------------------------------------------------------------------------
// `ranks` ranks of the node share the limit, each with `prefetch_budget`: error when the
// budgets exceed the limit, warn above half of it (the model and activations need the rest).
Finding check_memory(uint64_t mem_limit, uint64_t prefetch_budget, int ranks);

// --- dataset storage ------------------------------------------------------------------
// The name of a network or userspace file system for a statfs f_type ("NFS", "Lustre",
// "GPFS", "BeeGFS", "CIFS/SMB", "CephFS", "FUSE", ...), nullopt for anything else.
std::optional<std::string> network_fs_name(uint64_t f_type);
struct BlockDevice {
  std::string name;  // the whole disk: "sda" for a partition sda1
  bool rotational = false;
};
// The disk behind device number major:minor from `sys_root` ("/sys" live):
// dev/block/M:m, then its parent for a partition, then queue/rotational. nullopt when the
// number has no block device there (tmpfs, overlay, btrfs subvolumes: major 0).
std::optional<BlockDevice> block_device(const std::string& sys_root, unsigned major,
                                        unsigned minor);
// The finding for a dataset on a file system of type `f_type` on `device`.
Finding storage_finding(const std::string& dataset, uint64_t f_type,
                        const std::optional<BlockDevice>& device);
// statfs + stat of `dataset`, then storage_finding; error when the path cannot be read.
Finding check_storage(const std::string& dataset, const std::string& sys_root = "/sys");

// --- CPUs and GPUs --------------------------------------------------------------------
// info when cores of `topo` have several SMT siblings in `mask`, saying what the plan does
// with them (smt_as_cores: the profile's SmtAsCores).
Finding check_smt(const Topology& topo, const CpuSet& mask, bool smt_as_cores);
// warn for each GPU (PCI bus id; all of the topology's when empty) with none of its local
// CPUs in `mask`. One finding listing them all.
Finding check_gpu_locality(const Topology& topo, const CpuSet& mask,
                           const std::vector<std::string>& gpus);

// --- Python ---------------------------------------------------------------------------
inline const std::vector<std::string> kPythonModules = {"torch", "numpy", "PIL"};
// Where each module would be imported from (importlib's origin), asking `python`
// (no import is run, so it is fast); nullopt for a module that is not installed.
// Throws stoker::Error when the interpreter cannot be run.
std::map<std::string, std::optional<std::string>> python_module_files(
    const std::string& python, const std::vector<std::string>& modules = kPythonModules);
// The package root of a module file and what installed it: "/usr/lib/python3/dist-packages"
// is Debian's, other dist-packages pip's for the system Python, site-packages pip's (or a
// venv's, conda's), ~/.local a user install.
struct PackageRoot {
  std::string path, kind;
};
PackageRoot package_root(const std::string& module_file);
// warn when the modules come from more than one root; info for a missing one.
Finding check_python_sources(const std::map<std::string, std::optional<std::string>>& files);

// --- everything -----------------------------------------------------------------------
struct Options {
  std::optional<std::string> dataset;
  bool python = false;
  std::string python_exe;  // "" = $PYTHON, else /usr/bin/python3
  std::string shm_path = "/dev/shm";
};
// Runs every check on this process (its plan, mask, limits, cgroups, topology).
Report run_doctor(const Options& options);

}  // namespace stoker::doctor
