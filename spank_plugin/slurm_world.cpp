#include "slurm_world.hpp"

#include <netdb.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/proc_cgroup.hpp"
#include "stoker/error.hpp"

namespace stoker::spank {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? s.npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "0x3" or "3" (hex) -> CPUs {0,1}; nullopt when not hex.
std::optional<CpuSet> parse_hex_mask(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
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

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

CpuSet parse_or_empty(const std::string& text, const std::string& where) {
  if (text.empty()) return {};
  try {
    return CpuSet::parse(text, where);
  } catch (const Error&) {
    return {};
  }
}

std::string getenv_or(const EnvGetter& env, const std::string& name) {
  auto v = env(name);
  return v ? *v : std::string();
}

}  // namespace

CpuSet cpu_bind_union(std::string_view type, std::string_view list) {
  const bool mask = type.find("mask_cpu") != std::string_view::npos;
  const bool map = type.find("map_cpu") != std::string_view::npos;
  if ((!mask && !map) || list.empty()) return {};
  CpuSet all;
  for (auto item : split(list, ',')) {
    if (mask) {
      auto m = parse_hex_mask(item);
      if (!m) return {};
      all = all | *m;
    } else {
      int cpu = 0;
      if (item.empty()) return {};
      for (char c : item) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || cpu > 1'000'000) return {};
        cpu = cpu * 10 + (c - '0');
      }
      all.set(cpu);
    }
  }
  return all;
}

CpuSet cgroup_cpuset(const std::string& root) {
  const std::string base = root.ends_with('/') ? root : root + "/";
  // In file order: the v2 entry, or the v1 one holding the cpuset controller.
  for (const CgroupEntry& e : read_proc_cgroup(base + "proc/self/cgroup")) {
    std::vector<std::string> files;
    if (e.is_v2()) {
      files = {base + "sys/fs/cgroup" + e.path + "/cpuset.cpus.effective"};
    } else if (e.has_controller("cpuset")) {
      const std::string dir = base + "sys/fs/cgroup/cpuset" + e.path;
      files = {dir + "/cpuset.effective_cpus", dir + "/cpuset.cpus"};
    }
    for (const auto& f : files) {
      CpuSet cpus = parse_or_empty(read_first_line(f), f);
      if (!cpus.empty()) return cpus;
    }
  }
  return {};
}

StepCpus step_cpus(const EnvGetter& env, const std::string& cgroup_root) {
  const CpuSet bound =
      cpu_bind_union(getenv_or(env, "SLURM_CPU_BIND_TYPE"), getenv_or(env, "SLURM_CPU_BIND_LIST"));
  const CpuSet cgroup = cgroup_cpuset(cgroup_root);
  if (!bound.empty()) {
    if (cgroup.empty()) return {bound, "the local tasks' Slurm masks"};
    return {bound & cgroup, "the local tasks' Slurm masks within the cgroup cpuset"};
  }
  if (!cgroup.empty()) return {cgroup, "the step's cgroup cpuset"};
  return {{}, ""};
}

std::string step_gpu_ids(const EnvGetter& env) {
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"}) {
    auto v = env(name);
    if (v && !v->empty()) return *v;
  }
  return "";
}

std::string first_host(std::string_view nodelist) {
  // The first entry ends at the first comma outside brackets.
  int depth = 0;
  size_t end = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  std::string_view entry = nodelist.substr(0, end);
  std::string host;
  // Expand every bracket group to its first value: "r[1-2]n[03-04]" -> "r1n03".
  while (!entry.empty()) {
    const size_t open = entry.find('[');
    if (open == std::string_view::npos) {
      host += entry;
      break;
    }
    host += entry.substr(0, open);
    const size_t close = entry.find(']', open);
    std::string_view range =
        entry.substr(open + 1, close == entry.npos ? entry.npos : close - open - 1);
    const size_t stop = range.find_first_of(",-");
    host += range.substr(0, stop);
    if (close == std::string_view::npos) break;
    entry.remove_prefix(close + 1);
  }
  return host;
}

std::string master_address(std::string_view nodelist) {
  const std::string host = first_host(nodelist);
  if (!host.empty()) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &res) == 0) {
      freeaddrinfo(res);
      return host;
    }
  }
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') return name;
  return host.empty() ? "127.0.0.1" : host;
}

int master_port(uint32_t job_id) {
  return 20000 + static_cast<int>(job_id % 20000);
}

StepKind step_kind(uint32_t step_id) {
  switch (step_id) {
    case 0xfffffffbu:
      return StepKind::Batch;
    case 0xfffffffau:
      return StepKind::Interactive;
    case 0xfffffffcu:
      return StepKind::Extern;
    default:
      return StepKind::Normal;
  }
}

TuneDecision should_tune(const PluginConfig& cfg, const UserOptions& opts, bool any_flag,
                         StepKind kind) {
  if (kind == StepKind::Extern) return {false, "the extern step runs no user task"};
  if ((kind == StepKind::Batch || kind == StepKind::Interactive) && !cfg.batch_step) {
    return {false, "batch/interactive steps are not tuned (batch_step=no)"};
  }
  if (cfg.enable == EnableMode::Never) return {false, "the admin set enable=never"};
  if (opts.enable == Enable::Off) return {false, "--stoker=off"};
  if (cfg.enable == EnableMode::OptIn && !any_flag) {
    return {false, "enable=opt-in and no --stoker flag given"};
  }
  return {true, ""};
}

uint64_t rank_memory_bytes(uint64_t step_mb, uint64_t job_mb, int local_size, uint64_t fallback) {
  const uint64_t mb = step_mb ? step_mb : job_mb;
  const uint64_t node_bytes = mb ? mb * 1024 * 1024 : fallback;
  return node_bytes / static_cast<uint64_t>(local_size > 0 ? local_size : 1);
}

}  // namespace stoker::spank
