// Plans across the C interface: the plugin's (from an environment), one computed here, their
// fields as the table gives them (plan_fields.hpp), and the CPU shares of their workers.
#include <map>

#include "capi.hpp"
#include "capi_objects.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/loader/worker_shares.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/main_thread.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"

namespace stoker::capi {

namespace {

json lists(const std::vector<CpuSet>& shares) {
  json out = json::array();
  for (const CpuSet& s : shares) out.push_back(s.list());
  return out;
}

json plan_info(const Plan& p) {
  json fields = json::object();
  for (const PlanField& f : plan_fields()) {
    std::visit([&](const auto& v) { fields[f.name] = v; }, f.codec.value(p));
  }
  json reasons = json::array();
  for (const Reason& r : p.reasons) reasons.push_back({r.field, r.text});
  json env = json::object();
  for (const auto& [name, value] : plan_to_env(p)) env[name] = value;
  return {{"fields", fields},
          {"cpu_list", p.cpus.list()},
          {"main_cpu_list", p.main_cpus.list()},
          {"worker_cpu_list", p.worker_cpus.list()},
          {"reasons", reasons},
          {"env", env}};
}

// The plugin's plan in `env` (a snapshot of os.environ): as exported, or this worker's share of
// it under a launcher such as torchrun. A garbled or missing STOKER_* variable is a ValueError
// naming it: under the plugin that is a real fault, and planning anew would hide it.
void plugin_plan_call(const Call& c, Result& r) {
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : c.at("env").items()) env[name] = value.get<std::string>();
  try {
    if (auto local = plugin_plan(env_from(std::move(env)))) {
      r.object = std::make_unique<PlanObject>(std::move(local->plan));
    }
  } catch (const Error& e) {
    throw ValueError(e.what());
  }
}

std::optional<int> optional_int(const json& v) {
  if (v.is_null()) return std::nullopt;
  return v.get<int>();
}

}  // namespace

Calls plan_calls() {
  return {
      {"plugin_plan", plugin_plan_call},
      {"compute_plan",
       [](const Call& c, Result& r) {
         PlanRequest request;
         request.use_plugin_plan = false;  // plugin_plan had its say first
         request.local_rank = optional_int(c.args.value("local_rank", json()));
         request.local_size = optional_int(c.args.value("local_size", json()));
         LocalPlan local = plan_for_this_process(request);
         r.value = {{"source", local.source}};
         r.object = std::make_unique<PlanObject>(std::move(local.plan));
       }},
      {"plan_info", [](const Call& c,
                       Result& r) { r.value = plan_info(c.object<PlanObject>(0, "a plan").plan); }},
      {"plan_reason",
       [](const Call& c, Result& r) {
         r.value = c.object<PlanObject>(0, "a plan").plan.reason(c.at("field").get<std::string>());
       }},
      {"plan_add_reason",
       [](const Call& c, Result&) {
         c.object<PlanObject>(0, "a plan")
             .plan.reasons.push_back(
                 {c.at("field").get<std::string>(), c.at("text").get<std::string>()});
       }},
      {"plan_equal",
       [](const Call& c, Result& r) {
         r.value = c.object<PlanObject>(0, "a plan").plan == c.object<PlanObject>(1, "a plan").plan;
       }},
      {"worker_shares",
       [](const Call& c, Result& r) {
         r.value =
             lists(worker_shares(c.object<PlanObject>(0, "a plan").plan, c.at("n").get<int>()));
       }},
      {"split_cpus",
       [](const Call& c, Result& r) {
         r.value = lists(split_cpus(CpuSet::parse(c.at("cpus").get<std::string>(), "cpus"),
                                    c.at("n").get<int>()));
       }},
      {"pin_main_thread",
       [](const Call& c, Result& r) {
         const MainThreadPin p = pin_main_thread(c.object<PlanObject>(0, "a plan").plan);
         r.value = {p.pinned, p.note};
       }},
      {"main_threads",
       [](const Call& c, Result& r) {
         r.value = main_threads(c.object<PlanObject>(0, "a plan").plan);
       }},
      {"launch_rank", [](const Call&, Result& r) { r.value = launch_ranks(process_env()).rank; }},
      {"launch_world",
       [](const Call&, Result& r) {
         const Ranks w = launch_ranks(process_env());
         r.value = {{"rank", w.rank}, {"world_size", w.world_size}, {"source", w.source}};
       }},
  };
}

}  // namespace stoker::capi
