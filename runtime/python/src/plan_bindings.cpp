// Plan <-> Python: the plan's fields (plan_fields.hpp) as plain Python values, reading a
// plan from an environment mapping, and computing one for this process.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/worker_shares.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/main_thread.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

using Env = std::map<std::string, std::string>;

// Reads the plugin's plan from `env` (a snapshot of os.environ): as exported, or this
// worker's share of it under a launcher such as torchrun (plugin_plan). A present but
// garbled or missing STOKER_* variable is a ValueError naming it: under the plugin that is a
// real fault (a wrapper script that rewrote the environment), and silently planning anew
// would hide it.
std::optional<Plan> plugin_plan_in(const Env& env) {
  try {
    auto local = stoker::plugin_plan(env_from(env));  // checked against this machine
    if (!local) return std::nullopt;
    return std::move(local->plan);
  } catch (const Error& e) {
    throw py::value_error(e.what());
  }
}

Env env_of(const Plan& plan) {
  Env env;
  for (const auto& [name, value] : plan_to_env(plan)) env[name] = value;
  return env;
}

std::vector<std::vector<int>> lists_of(const std::vector<CpuSet>& shares) {
  std::vector<std::vector<int>> out;
  for (const CpuSet& share : shares) out.push_back(share.list());
  return out;
}

// The bounds and the default depth of stoker/plan/limits.hpp, for the Python layer's checks.
py::dict limits_dict() {
  py::dict d;
  d["max_workers"] = limits::kMaxWorkers;
  d["max_prefetch"] = limits::kMaxPrefetch;
  d["default_prefetch"] = limits::kDefaultPrefetch;
  d["max_shuffle_buffer"] = limits::kMaxShuffleBuffer;
  return d;
}

py::list reasons_of(const Plan& plan) {
  py::list out;
  for (const Reason& r : plan.reasons) out.append(py::make_tuple(r.field, r.text));
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  py::class_<Plan> plan(m, "Plan", "A rank's plan (use stoker.plan(); this is its C++ half)");
  // Every field of the table (plan_fields.hpp), as its --json value; then the CPU lists as
  // lists, the reasons and the methods.
  py::tuple fields(plan_fields().size());
  size_t i = 0;
  for (const PlanField& f : plan_fields()) {
    plan.def_property_readonly(f.name, [&f](const Plan& p) { return f.codec.value(p); });
    fields[i++] = py::make_tuple(f.name, f.env, f.example);
  }
  m.attr("plan_fields") = fields;
  plan.def_property_readonly("cpu_list", [](const Plan& p) { return p.cpus.list(); })
      .def_property_readonly("main_cpu_list", [](const Plan& p) { return p.main_cpus.list(); })
      .def_property_readonly("worker_cpu_list", [](const Plan& p) { return p.worker_cpus.list(); })
      .def_property_readonly("reasons", &reasons_of)
      .def("reason", &Plan::reason, py::arg("field"))
      .def(
          "add_reason",
          [](Plan& p, const std::string& field, const std::string& text) {
            p.reasons.push_back({field, text});
          },
          py::arg("field"), py::arg("text"), "Adds a reason (what applying the plan did)")
      .def("to_env", &env_of, "The STOKER_* variables that describe this plan")
      .def(
          "__eq__", [](const Plan& a, const Plan& b) { return a == b; }, py::is_operator());

  m.def("plugin_plan", &plugin_plan_in, py::arg("environ"),
        "The plan the STOKER_* variables of `environ` describe (under a launcher that started "
        "several workers in the tuned task, such as torchrun: this worker's share of it); "
        "None without STOKER_PLAN_VERSION. ValueError naming the variable when one is "
        "garbled or missing.");
  m.def(
      "split_cpus",
      [](const std::string& cpus, int n) {
        return lists_of(split_cpus(CpuSet::parse(cpus, "cpus"), n));
      },
      py::arg("cpus"), py::arg("n"), "The CPU lists of n equal shares of `cpus` (split_cpus)");
  m.def(
      "worker_shares", [](const Plan& plan, int n) { return lists_of(worker_shares(plan, n)); },
      py::arg("plan"), py::arg("workers"),
      "The CPU list of each of `workers` workers of `plan`, by the C++ loader's rule: the "
      "plan's worker CPUs split; more workers than those spread over the rank's CPUs");
  m.attr("limits") = limits_dict();
  m.def(
      "pin_main_thread",
      [](Plan& plan) {
        const MainThreadPin p = pin_main_thread(plan);
        return py::make_tuple(p.pinned, p.note);
      },
      py::arg("plan"),
      "(pinned, note): pins the calling thread to the plan's main CPUs and adds the note to "
      "its reasons (pin_main_thread); never raises");
  m.def(
      "launch_rank", [] { return launch_ranks(process_env()).rank; },
      "This process's rank as the launcher's variables say (launch_ranks: Open MPI, then "
      "torchrun, then Slurm); no MPI call");
  m.attr("VERBOSE_VAR") = kVerboseVar;  // the one spelling, for _plan.py and _world.py
  m.def("main_threads", &main_threads, py::arg("plan"),
        "The intra-op threads (torch, OpenMP) the plan's main CPUs give: one per CPU, >= 1");
  m.def(
      "compute_plan",
      [](std::optional<int> local_rank, std::optional<int> local_size) {
        PlanRequest request;
        request.use_plugin_plan = false;  // plugin_plan had its say first
        request.local_rank = local_rank;
        request.local_size = local_size;
        LocalPlan local = plan_for_this_process(request);
        return py::make_tuple(local.plan, local.source);
      },
      py::arg("local_rank") = py::none(), py::arg("local_size") = py::none(),
      "(plan, source): a plan computed for this process from its CPU mask, GPUs, memory "
      "limit and STOKER_PROFILE / STOKER_PROFILES; local_rank/local_size: this rank's place "
      "on the node when the launcher's variables do not say it (a torch.distributed group)");
}

}  // namespace stoker::python
