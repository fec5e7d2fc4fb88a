// The STOKER_* environment contract (docs/reference.md tables it): writing a plan out and reading
// it back, field by field as plan_fields() describes them, and checking it against this machine.
#include "stoker/plan/plan_env.hpp"

#include <memory>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/plan/plan_fields.hpp"

namespace stoker {

EnvVars plan_to_env(const Plan& p) {
  EnvVars out{{"STOKER_PLAN_VERSION", std::to_string(Plan::kVersion)}};
  for (const PlanField& f : plan_fields()) out.emplace_back(f.env, f.codec.write(p));
  return out;
}

namespace {

// The seal's own entry: the step it was made for. '@' begins no variable's name.
constexpr const char* kSealStep = "@step";

std::string step_text(const std::string& job, const std::string& step) {
  return job + "." + step;
}

}  // namespace

std::string plan_seal(const EnvVars& vars, uint32_t job_id, uint32_t step_id) {
  std::vector<std::string> items{std::string(kSealStep) + "=" +
                                 step_text(std::to_string(job_id), std::to_string(step_id))};
  for (const auto& [name, value] : vars) {
    if (value.find(';') == std::string::npos) items.push_back(name + "=" + value);
  }
  return join(items, ";");
}

SealedEnv sealed_env(const EnvGetter& env) {
  const std::optional<std::string> seal = env(kPlanSealVar);
  SealedEnv as_it_is;  // the environment unsealed
  as_it_is.env = env;
  if (!seal) return as_it_is;
  if (seal->empty()) {
    as_it_is.note = std::string(kPlanSealVar) +
                    " is empty (cleared after the plugin planned, by a container image's "
                    "environment or a wrapper): the STOKER_* values are read as they are, "
                    "unchecked against the plugin's";
    return as_it_is;
  }
  auto items = split_assignments(*seal, ';');
  const auto made_for = items.find(kSealStep);
  if (made_for != items.end()) {
    const std::optional<std::string> job = env("SLURM_JOB_ID"), step = env("SLURM_STEP_ID");
    if (job && step && step_text(*job, *step) != made_for->second) {
      as_it_is.other_step = true;
      as_it_is.note = std::string(kPlanSealVar) + " was made for job.step " + made_for->second +
                      ", and this process runs in " + step_text(*job, *step) +
                      ": its STOKER_* plan was inherited from that step (a step launched inside "
                      "a tuned one), not made for this one";
      return as_it_is;
    }
    items.erase(made_for);
  }
  auto sealed = std::make_shared<const std::map<std::string, std::string>>(std::move(items));
  SealedEnv out;
  const auto differs = [&env](const std::string& name, const std::string& value,
                              std::vector<std::string>& changes) {
    const std::optional<std::string> now = env(name);
    if (now == value) return;
    changes.push_back(now ? name + "=" + *now + " (the plugin's " + value + ")"
                          : name + " unset (the plugin's " + value + ")");
  };
  for (const auto& [name, value] : *sealed) differs(name, value, out.changed);
  const auto exported = split_assignments(env(kExportedVar).value_or(""), ',');
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
    if (const auto it = exported.find(name); it != exported.end())
      differs(name, it->second, out.threads_changed);
  }
  out.env = [env, sealed](const std::string& name) -> std::optional<std::string> {
    const auto it = sealed->find(name);
    return it != sealed->end() ? std::optional<std::string>(it->second) : env(name);
  };
  return out;
}

std::optional<Plan> read_plan(const EnvGetter& get) {
  auto version = get("STOKER_PLAN_VERSION");
  if (!version) return std::nullopt;
  if (*version != std::to_string(Plan::kVersion))
    throw Error("STOKER_PLAN_VERSION",
                "version '" + *version + "' is not the one this runtime reads",
                "this runtime reads version " + std::to_string(Plan::kVersion) +
                    ": use the plugin and runtime of the same stoker release");
  Plan p;
  for (const PlanField& f : plan_fields()) {
    if (get(f.env)) {
      f.codec.read(p, get, f.env);
    } else if (f.required) {
      throw Error(f.env, "is missing while STOKER_PLAN_VERSION is set",
                  "export the whole STOKER_* set (the plugin does), or unset STOKER_PLAN_VERSION");
    }
  }
  if (p.local_rank >= p.local_size)
    throw_garbled_env("STOKER_LOCAL_RANK", std::to_string(p.local_rank),
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
