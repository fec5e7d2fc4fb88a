// The facts about a task that the plugin and the runtime read the same way: the step's CPUs
// (Slurm's masks, the cgroup cpuset), its GPU ids and its memory.
#include <cctype>

#include "common/proc_cgroup.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/task_facts.hpp"
#include "stoker/topology/gpu_identity.hpp"

namespace stoker {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "0x3" or "3" (hex) -> CPUs {0,1}; nullopt when not hex.
std::optional<CpuSet> parse_hex_mask(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > CpuSet::kMaxCpu / 4) return std::nullopt;
  CpuSet set;
  int bit = 0;
  for (auto it = text.rbegin(); it != text.rend(); ++it, bit += 4) {
    const int d = hex_digit(*it);
    if (d < 0) return std::nullopt;
    for (int i = 0; i < 4; ++i) {
      if (d & (1 << i)) set.set(bit + i);
    }
  }
  return set;
}

CpuSet parse_or_empty(const std::optional<std::string>& text, const std::string& where) {
  if (!text || text->empty()) return {};
  try {
    return CpuSet::parse(*text, where);
  } catch (const Error&) {
    return {};
  }
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

}  // namespace

CpuSet cpu_bind_union(std::string_view type, std::string_view list) {
  const bool mask = type.find("mask_cpu") != std::string_view::npos;
  const bool map = type.find("map_cpu") != std::string_view::npos;
  if ((!mask && !map) || list.empty()) return {};
  CpuSet all;
  for (std::string_view item : split(list, ',')) {
    if (mask) {
      const auto m = parse_hex_mask(item);
      if (!m) return {};
      all = all | *m;
    } else {
      const auto cpu = values::parse_whole(item, 0, CpuSet::kMaxCpu - 1);
      if (!cpu) return {};
      all.set(static_cast<int>(*cpu));
    }
  }
  return all;
}

CpuSet cgroup_cpuset(const std::string& root) {
  // In file order: the v2 entry, or the v1 one holding the cpuset controller.
  for (const CgroupEntry& e : read_proc_cgroup(under_root(root, "/proc/self/cgroup"))) {
    std::vector<std::string> files;
    if (e.is_v2()) {
      files = {under_root(root, "/sys/fs/cgroup" + e.path + "/cpuset.cpus.effective")};
    } else if (e.has_controller("cpuset")) {
      const std::string dir = under_root(root, "/sys/fs/cgroup/cpuset" + e.path);
      files = {dir + "/cpuset.effective_cpus", dir + "/cpuset.cpus"};
    }
    for (const auto& f : files) {
      CpuSet cpus = parse_or_empty(read_first_line(f), f);
      if (!cpus.empty()) return cpus;
    }
  }
  return {};
}

StepCpus step_cpus(const EnvGetter& env, const std::string& root, const CpuSet& stepd_cgroup) {
  const CpuSet bound = cpu_bind_union(env("SLURM_CPU_BIND_TYPE").value_or(""),
                                      env("SLURM_CPU_BIND_LIST").value_or(""));
  CpuSet cgroup = cgroup_cpuset(root);
  std::string seen;  // whose view the cgroup is from, when not this process's
  if (cgroup.empty() && !stepd_cgroup.empty()) {
    // Inside a container's namespaces (pyxis, enroot) the step's cgroup is out of view;
    // slurmstepd read it before the task joined them.
    cgroup = stepd_cgroup;
    seen = " (as slurmstepd saw it before the container's namespaces)";
  }
  if (!bound.empty()) {
    if (cgroup.empty()) {
      return {bound,
              "the local tasks' Slurm masks (no cgroup cpuset is readable in this process's "
              "view: Slurm confines with none, or a container hides the step's)"};
    }
    return {bound & cgroup, "the local tasks' Slurm masks within the cgroup cpuset" + seen};
  }
  if (!cgroup.empty()) return {cgroup, "the step's cgroup cpuset" + seen};
  return {};
}

std::optional<GpuIds> step_gpu_ids(const EnvGetter& env) {
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"}) {
    const auto v = env(name);
    if (v && !v->empty()) return GpuIds{*v, name};
  }
  return std::nullopt;
}

NodeMemory node_memory(const EnvGetter& env, const StepdFacts& stepd, const std::string& root) {
  if (stepd.step_mb) return {stepd.step_mb * kMiB, "the step's allocation on this node"};
  if (stepd.job_mb) return {stepd.job_mb * kMiB, "the job's allocation on this node"};
  // In MB. 0 (--mem=0) means "all of the node": the memory limit below says how much.
  constexpr uint64_t kMaxNodeMb = uint64_t{1} << 30, kMaxCpuMb = uint64_t{1} << 24;
  if (const auto mb = env_whole(env, "SLURM_MEM_PER_NODE", 0, kMaxNodeMb); mb && *mb)
    return {*mb * kMiB, "SLURM_MEM_PER_NODE"};
  const auto per_cpu = env_whole(env, "SLURM_MEM_PER_CPU", 0, kMaxCpuMb);
  const auto cpus = env_whole(env, "SLURM_CPUS_ON_NODE", 1, CpuSet::kMaxCpu);
  if (per_cpu && *per_cpu && cpus)
    return {*per_cpu * *cpus * kMiB, "SLURM_MEM_PER_CPU x SLURM_CPUS_ON_NODE"};
  return {memory_limit_bytes(root), "this process's memory limit"};
}

void observe_task(TaskFacts& w, const EnvGetter& env, const StepdFacts& stepd,
                  const std::string& root) {
  // The task's mask, also after pin_main_thread narrowed this thread to the main CPUs.
  w.own_mask = task_cpu_mask();
  if (env("SLURM_JOB_ID")) {
    w.step = step_cpus(env, root, stepd.stepd_cgroup);
    const auto ids = step_gpu_ids(env);
    w.gpu_ids = ids ? ids->ids : "";
    w.gpu_ids_from = ids ? ids->from : "no GPU in SLURM_STEP_GPUS, SLURM_JOB_GPUS";
  } else {
    // A launcher that does not bind (torchrun) gives every local rank this same mask.
    w.step = {w.own_mask, "this process's mask; not a Slurm task"};
    w.gpu_ids = env("CUDA_VISIBLE_DEVICES");
    w.gpu_ids_from = w.gpu_ids ? "CUDA_VISIBLE_DEVICES" : "";
  }
  w.gpu_minors = read_nvidia_device_minors(under_root(root, "/proc/driver/nvidia/gpus"));
  const NodeMemory m = node_memory(env, stepd, root);
  w.memory = m.bytes;
  w.memory_per_rank = false;
  w.memory_from = m.from;
  const ThreadRoom threads = thread_room(root);
  w.thread_room = threads.room;
  w.thread_room_from = threads.limits.empty() ? "" : threads.limits.front();
}

}  // namespace stoker
