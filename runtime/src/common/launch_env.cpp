#include "stoker/common/launch_env.hpp"

#include <cstdlib>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {

struct Pair {
  uint64_t index = 0, size = 1;
  std::string from;
};

// A (rank, size) pair named by two variables: both or neither, and the rank below the size.
std::optional<Pair> read_pair(const EnvGetter& env, const std::string& rank_name,
                              const std::string& size_name, uint64_t max_size) {
  const auto rank = env_whole(env, rank_name, 0, max_size - 1);
  const auto size = env_whole(env, size_name, 1, max_size);
  if (!rank && !size) return std::nullopt;
  if (!rank || !size) {
    const std::string& unset = rank ? size_name : rank_name;
    throw Error(unset, "is unset while " + (rank ? rank_name : size_name) + " is set",
                "set both, or neither");
  }
  return Pair{*rank, *size, rank_name + "/" + size_name};
}

void check_below(const Pair& p, const std::string& rank_name, const std::string& size_name) {
  if (p.index < p.size) return;
  throw Error(rank_name,
              "rank " + std::to_string(p.index) + " is not below " + size_name + "=" +
                  std::to_string(p.size),
              "ranks are numbered 0 to " + size_name + " - 1");
}

std::optional<Pair> slurm_world(const EnvGetter& env) {
  const auto rank = env_whole(env, "SLURM_PROCID", 0, kMaxRanks - 1);
  if (!rank) return std::nullopt;
  // The batch script's own step may run without a task count: it is one task.
  const auto size = env_whole(env, "SLURM_NTASKS", 1, kMaxRanks);
  Pair p{*rank, size.value_or(1), size ? "SLURM_PROCID/SLURM_NTASKS" : "SLURM_PROCID"};
  check_below(p, "SLURM_PROCID", "SLURM_NTASKS");
  return p;
}

// Slurm sets SLURM_NTASKS_PER_NODE only when asked for it; the step's task list
// (SLURM_STEP_TASKS_PER_NODE, "2(x2)") always says how many tasks share this node.
std::optional<Pair> slurm_local(const EnvGetter& env) {
  const auto local = env_whole(env, "SLURM_LOCALID", 0, kMaxLocalRanks - 1);
  if (!local) return std::nullopt;
  for (const char* list_name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    const auto list = env(list_name);
    if (!list) continue;
    const uint64_t node = env_whole(env, "SLURM_NODEID", 0, kMaxRanks - 1).value_or(0);
    Pair p{*local, slurm_tasks_on_node(list_name, *list, node),
           std::string("SLURM_LOCALID/") + list_name};
    if (p.size == 0)
      throw Error(list_name,
                  "'" + *list + "' lists no task for SLURM_NODEID=" + std::to_string(node),
                  "fix or unset the launcher's variables");
    check_below(p, "SLURM_LOCALID", list_name);
    return p;
  }
  if (*local > 0)
    throw Error("SLURM_LOCALID",
                std::to_string(*local) +
                    " while neither SLURM_STEP_TASKS_PER_NODE nor SLURM_TASKS_PER_NODE says how "
                    "many tasks share this node",
                "set both, or neither");
  return Pair{0, 1, "SLURM_LOCALID (alone: no task count)"};
}

struct Launcher {
  const char *rank, *world_size, *local_rank, *local_size;
};
constexpr Launcher kOpenMpi{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                            "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
constexpr Launcher kTorch{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};

std::optional<Pair> checked_pair(const EnvGetter& env, const char* rank, const char* size,
                                 uint64_t max_size) {
  auto p = read_pair(env, rank, size, max_size);
  if (p) check_below(*p, rank, size);
  return p;
}

}  // namespace

EnvGetter process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

EnvGetter env_from(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::optional<std::string> env_nonempty(const EnvGetter& env, const std::string& name) {
  auto v = env(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

void throw_garbled_env(const std::string& name, const std::string& value,
                       const std::string& allowed) {
  throw Error(name, "garbled value '" + value + "'",
              "expected " + allowed + "; fix or unset " + name);
}

std::optional<uint64_t> env_whole(const EnvGetter& env, const std::string& name, uint64_t lo,
                                  uint64_t hi) {
  const auto v = env(name);
  if (!v) return std::nullopt;
  const auto n = values::parse_whole(*v, lo, hi);
  if (!n) {
    throw_garbled_env(name, *v,
                      hi == UINT64_MAX ? "a whole number, " + std::to_string(lo) + " or more"
                                       : "a whole number from " + std::to_string(lo) + " to " +
                                             std::to_string(hi));
  }
  return n;
}

std::optional<CpuSet> env_cpus(const EnvGetter& env, const std::string& name) {
  const auto v = env(name);
  if (!v) return std::nullopt;
  try {
    return CpuSet::parse(*v, name);
  } catch (const Error&) {
    throw_garbled_env(name, *v, "an OS CPU list such as 0-5,12");
  }
}

uint64_t slurm_tasks_on_node(const std::string& name, const std::string& list, uint64_t node) {
  auto bad = [&] { return Error(name, "'" + list + "' is not a Slurm task list such as 2(x3),1"); };
  auto number = [&](std::string_view s, uint64_t hi) {
    const auto v = values::parse_whole(s, 0, hi);
    if (!v) throw bad();
    return *v;
  };
  // The whole list is read, so a garbled one is an error whichever node asks.
  uint64_t first = 0, found = 0;
  for (std::string_view item : split(list, ',')) {
    uint64_t repeat = 1;
    if (const size_t p = item.find("(x"); p != std::string_view::npos) {
      if (!item.ends_with(')')) throw bad();
      repeat = number(item.substr(p + 2, item.size() - p - 3), kMaxRanks);
      item = item.substr(0, p);
    }
    const uint64_t tasks = number(item, kMaxLocalRanks);
    if (node >= first && node - first < repeat) found = tasks;
    first += repeat;
  }
  return found;
}

Ranks launch_ranks(const EnvGetter& env) {
  std::optional<Pair> world, local;
  for (const Launcher& l : {kOpenMpi, kTorch}) {
    if (!world) world = checked_pair(env, l.rank, l.world_size, kMaxRanks);
    if (!local) local = checked_pair(env, l.local_rank, l.local_size, kMaxLocalRanks);
  }
  if (!world) world = slurm_world(env);
  if (!local) local = slurm_local(env);
  Ranks r;
  if (world) {
    r.rank = world->index;
    r.world_size = world->size;
    r.source = world->from;
  }
  if (local) {
    r.local_rank = local->index;
    r.local_size = local->size;
    r.source += (r.source.empty() ? "" : ", ") + local->from;
  }
  if (r.source.empty()) r.source = "single process: no launcher variables";
  return r;
}

}  // namespace stoker
