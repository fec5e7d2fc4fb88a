// The STOKER_* environment contract (README table): writing a plan out and reading it back.
#include "stoker/plan/plan_env.hpp"

#include "stoker/common/error.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {

// Reads one variable; `required` ones must be present when a plan is.
class Reader {
 public:
  explicit Reader(const EnvGetter& get) : get_(get) {}

  std::optional<std::string> optional(const std::string& name) const { return get_(name); }

  std::string required(const std::string& name) const {
    auto v = get_(name);
    if (!v)
      throw Error(name, "is missing while STOKER_PLAN_VERSION is set",
                  "export the whole STOKER_* set (the plugin does), or unset STOKER_PLAN_VERSION");
    return *v;
  }

  [[noreturn]] static void garbled(const std::string& name, const std::string& value,
                                   const std::string& expected) {
    throw_garbled_env(name, value, expected);
  }

  uint64_t whole(const std::string& name, uint64_t lo, uint64_t hi, bool need = true) const {
    if (need) required(name);
    return env_whole(get_, name, lo, hi).value_or(lo);
  }

  CpuSet cpus(const std::string& name) const {
    required(name);
    return *env_cpus(get_, name);
  }

 private:
  const EnvGetter& get_;
};

}  // namespace

EnvVars plan_to_env(const Plan& p) {
  return {
      {"STOKER_PLAN_VERSION", std::to_string(Plan::kVersion)},
      {"STOKER_PROFILE", p.profile},
      {"STOKER_WORKERS", std::to_string(p.workers)},
      {"STOKER_PREFETCH", std::to_string(p.prefetch)},
      {"STOKER_PREFETCH_MAX", std::to_string(p.prefetch_max)},
      {"STOKER_CPUS", p.cpus.to_string()},
      {"STOKER_MAIN_CPUS", p.main_cpus.to_string()},
      {"STOKER_WORKER_CPUS", p.worker_cpus.to_string()},
      {"STOKER_NUMA", join_numbers(p.numa)},
      {"STOKER_GPU", p.gpu},
      {"STOKER_PIN_MEMORY", p.pin_memory ? "1" : "0"},
      {"STOKER_STREAM", p.stream ? "1" : "0"},
      {"STOKER_SHUFFLE_BUFFER", std::to_string(p.shuffle_buffer)},
      {"STOKER_MEM_BUDGET", std::to_string(p.mem_budget)},
      {"STOKER_BATCH_BYTES", std::to_string(p.batch_bytes)},
      {"STOKER_NICS", join(p.nics)},
      {"STOKER_BIND", to_string(p.bind)},
      {"STOKER_MEM_BIND", to_string(p.mem_bind)},
      {"STOKER_LOCAL_RANK", std::to_string(p.local_rank)},
      {"STOKER_LOCAL_SIZE", std::to_string(p.local_size)},
  };
}

std::optional<Plan> read_plan(const EnvGetter& get) {
  Reader env(get);
  auto version = env.optional("STOKER_PLAN_VERSION");
  if (!version) return std::nullopt;
  if (*version != std::to_string(Plan::kVersion))
    throw Error("STOKER_PLAN_VERSION",
                "version '" + *version + "' is not the one this runtime reads",
                "this runtime reads version " + std::to_string(Plan::kVersion) +
                    ": use the plugin and runtime of the same stoker release");
  Plan p;
  p.profile = env.required("STOKER_PROFILE");
  if (!values::valid_name(p.profile))
    Reader::garbled("STOKER_PROFILE", p.profile, "a profile name (letters, digits, '-', '_')");
  p.workers = static_cast<int>(env.whole("STOKER_WORKERS", 1, limits::kMaxWorkers));
  p.prefetch = static_cast<int>(env.whole("STOKER_PREFETCH", 1, limits::kMaxPrefetch));
  p.prefetch_max =
      static_cast<int>(env.whole("STOKER_PREFETCH_MAX", p.prefetch, limits::kMaxPrefetch));
  p.cpus = env.cpus("STOKER_CPUS");
  p.main_cpus = env.cpus("STOKER_MAIN_CPUS");
  p.worker_cpus = env.cpus("STOKER_WORKER_CPUS");
  if (auto numa = env.optional("STOKER_NUMA"); numa && !numa->empty()) {
    for (std::string_view item : split(*numa, ',')) {
      auto n = values::parse_whole(item, 0, 1 << 16);
      if (!n) Reader::garbled("STOKER_NUMA", *numa, "NUMA node numbers such as 0,1");
      p.numa.push_back(static_cast<int>(*n));
    }
  }
  p.gpu = env.optional("STOKER_GPU").value_or("");
  std::string pin = env.required("STOKER_PIN_MEMORY");
  if (pin != "0" && pin != "1") Reader::garbled("STOKER_PIN_MEMORY", pin, "0 or 1");
  p.pin_memory = pin == "1";
  if (auto stream = env.optional("STOKER_STREAM")) {
    if (*stream != "0" && *stream != "1") Reader::garbled("STOKER_STREAM", *stream, "0 or 1");
    p.stream = *stream == "1";
  }
  if (env.optional("STOKER_SHUFFLE_BUFFER")) {
    p.shuffle_buffer = env.whole("STOKER_SHUFFLE_BUFFER", 1, limits::kMaxShuffleBuffer, false);
  }
  p.mem_budget = env.whole("STOKER_MEM_BUDGET", 0, UINT64_MAX);
  p.batch_bytes = env.whole("STOKER_BATCH_BYTES", 0, UINT64_MAX, false);
  if (auto nics = env.optional("STOKER_NICS"); nics && !nics->empty()) {
    for (std::string_view item : split(*nics, ',')) {
      if (item.empty()) Reader::garbled("STOKER_NICS", *nics, "NIC names separated by commas");
      p.nics.emplace_back(item);
    }
  }
  if (auto bind = env.optional("STOKER_BIND")) {
    auto b = parse_bind_mode(*bind);
    if (!b) Reader::garbled("STOKER_BIND", *bind, "gpu-numa, even or none");
    p.bind = *b;
  }
  if (auto mem = env.optional("STOKER_MEM_BIND")) {
    auto m = parse_mem_bind(*mem);
    if (!m) Reader::garbled("STOKER_MEM_BIND", *mem, "local, strict or none");
    p.mem_bind = *m;
  }
  p.local_size = static_cast<int>(env.whole("STOKER_LOCAL_SIZE", 1, 1 << 16, false));
  p.local_rank = static_cast<int>(env.whole("STOKER_LOCAL_RANK", 0, 1 << 16, false));
  if (p.local_rank >= p.local_size)
    Reader::garbled("STOKER_LOCAL_RANK", std::to_string(p.local_rank),
                    "a rank below STOKER_LOCAL_SIZE=" + std::to_string(p.local_size));
  p.reasons.push_back(
      {"source", "read from the STOKER_* environment (plan version " + *version + ")"});
  return p;
}

namespace {

// The machine's online CPUs or NUMA nodes (a /sys list file); nullopt when unreadable.
std::optional<CpuSet> online(const std::string& root, const std::string& path) {
  const auto text = read_first_line(under_root(root, path));
  if (!text) return std::nullopt;
  try {
    return CpuSet::parse(*text, path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

void check_cpus_exist(const std::string& name, const CpuSet& cpus, const CpuSet& machine) {
  if (cpus.is_subset_of(machine)) return;
  throw Error(name,
              "names CPUs " + (cpus - machine).to_string() +
                  " that this machine does not have "
                  "(its online CPUs: " +
                  machine.to_string() + ")",
              "fix or unset " + name + "; the plugin plans for the node it runs on");
}

}  // namespace

void check_env_plan(const Plan& p, const std::string& root) {
  if (const auto cpus = online(root, "/sys/devices/system/cpu/online")) {
    check_cpus_exist("STOKER_CPUS", p.cpus, *cpus);
    check_cpus_exist("STOKER_MAIN_CPUS", p.main_cpus, *cpus);
    check_cpus_exist("STOKER_WORKER_CPUS", p.worker_cpus, *cpus);
  }
  // A kernel without NUMA has node 0 only.
  const CpuSet nodes =
      online(root, "/sys/devices/system/node/online").value_or(CpuSet::from_list({0}));
  for (int node : p.numa) {
    if (nodes.test(node)) continue;
    throw Error("STOKER_NUMA",
                "names NUMA node " + std::to_string(node) +
                    ", which this machine does not have (its nodes: " + nodes.to_string() + ")",
                "fix or unset STOKER_NUMA");
  }
  if (p.mem_budget == 0) {
    throw Error("STOKER_MEM_BUDGET", "is 0: a budget of 0 bytes holds no batch",
                "give the bytes the prefetched batches may use, at least one batch, as the "
                "plugin does");
  }
}

}  // namespace stoker
