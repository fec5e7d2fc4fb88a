// The table of the Plan's fields (plan_fields.hpp): every row round-trips env -> Plan -> env
// and env -> Plan -> `stoker plan --json`, and the human views read as they did when each was
// written by hand (the plugin's verbose line, `stoker plan`'s table, the what-if columns).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <variant>

#include "plan_fixture.hpp"
#include "run_command.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"

namespace stoker {
namespace {

using nlohmann::json;

// STOKER_PLAN_VERSION and every field's example value.
std::map<std::string, std::string> example_env() {
  std::map<std::string, std::string> env{{"STOKER_PLAN_VERSION", std::to_string(Plan::kVersion)}};
  for (const PlanField& f : plan_fields()) env[f.env] = f.example;
  return env;
}

json as_json(const FieldValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

TEST(PlanFields, NamesAreUniqueAndTheVariableIsTheNameInCapitals) {
  std::set<std::string> names, vars;
  for (const PlanField& f : plan_fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_TRUE(vars.insert(f.env).second) << f.env;
    std::string upper = f.name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    EXPECT_EQ(std::string(f.env), "STOKER_" + upper) << f.name;
    EXPECT_TRUE(f.codec.write && f.codec.read && f.codec.value && f.codec.human) << f.name;
  }
}

TEST(PlanFields, EveryFieldRoundTripsThroughTheEnvironment) {
  const auto env = example_env();
  const std::optional<Plan> p = read_plan(env_from(env));
  ASSERT_TRUE(p);
  const Plan defaults;
  for (const PlanField& f : plan_fields()) {
    EXPECT_EQ(f.codec.write(*p), f.example) << f.env << ": the value read is written back";
    EXPECT_NE(as_json(f.codec.value(*p)), as_json(f.codec.value(defaults)))
        << f.env << "=" << f.example << " was not read (the plan has the default)";
  }
  std::map<std::string, std::string> written;
  for (const auto& [name, value] : plan_to_env(*p)) written[name] = value;
  EXPECT_EQ(written, env);
}

TEST(PlanFields, AbsentOptionalFieldsKeepThePlansDefault) {
  auto env = example_env();
  for (const PlanField& f : plan_fields())
    if (!f.required) env.erase(f.env);
  const std::optional<Plan> p = read_plan(env_from(env));
  ASSERT_TRUE(p);
  const Plan defaults;
  for (const PlanField& f : plan_fields()) {
    if (!f.required) {
      EXPECT_EQ(f.codec.write(*p), f.codec.write(defaults)) << f.env;
    }
  }
}

// env -> Plan -> JSON: the command as built, given only the example plan's variables.
TEST(PlanFields, EveryFieldReachesStokerPlanJson) {
  if (!std::filesystem::exists(test::stoker_cli())) GTEST_SKIP() << "stoker is not built";
  std::string command = "env -i";
  for (const auto& [name, value] : example_env()) command += " " + name + "='" + value + "'";
  const auto r = test::run_command(command + " " + test::stoker_cli() + " plan --json 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  const Plan p = *read_plan(env_from(example_env()));
  std::set<std::string> keys{"plan_version", "source", "reasons"};
  for (const PlanField& f : plan_fields()) {
    keys.insert(f.name);
    EXPECT_EQ(j.at(f.name), as_json(f.codec.value(p))) << f.name;
  }
  std::set<std::string> got;
  for (const auto& [key, value] : j.items()) got.insert(key);
  EXPECT_EQ(got, keys);
}

using test::sample_plan;

std::vector<std::string> items(const Plan& p, PlanView view, const std::string& between) {
  std::vector<std::string> out;
  for (const ShownField& f : show(p, view)) out.push_back(f.label + between + f.text);
  return out;
}

TEST(PlanFields, TheVerboseLineReadsAsBefore) {
  EXPECT_EQ(items(sample_plan(), PlanView::Line, "="),
            (std::vector<std::string>{"profile=cv", "cpus=8-15,136-143", "main=8,136", "workers=6",
                                      "worker_cpus=9-15,137-143", "prefetch=12", "prefetch_max=48",
                                      "mem_budget=34359738368", "pin_memory=yes",
                                      "gpu=0000:47:00.0", "bind=even", "mem_bind=none"}));
  EXPECT_EQ(items(Plan{}, PlanView::Line, "=")[1], "cpus=") << "an empty CPU list: nothing";
  EXPECT_EQ(items(Plan{}, PlanView::Line, "=")[9], "gpu=-");
}

TEST(PlanFields, StokerPlansTableReadsAsBefore) {
  EXPECT_EQ(items(sample_plan(), PlanView::Table, ": "),
            (std::vector<std::string>{
                "cpus: 8-15,136-143 (16 CPUs)", "main cpus: 8,136", "worker cpus: 9-15,137-143",
                "numa: 1,3", "workers: 6",
                "prefetch: 12 batches of 128 MiB, up to 48 (the controller's room)",
                "mem budget: 32 GiB", "pin memory: yes", "stream: yes, shuffle buffer 512",
                "gpu: 0000:47:00.0", "nics: mlx5_1,eth0", "bind: even, mem-bind none"}));
  Plan fixed;
  fixed.prefetch_max = fixed.prefetch;
  EXPECT_EQ(items(fixed, PlanView::Table, ": ")[0], "cpus: - (0 CPUs)");
  EXPECT_NE(items(fixed, PlanView::Table, ": ")[5].find(" (fixed)"), std::string::npos);
  EXPECT_EQ(items(fixed, PlanView::Table, ": ")[8], "stream: no");
}

TEST(PlanFields, TheWhatIfColumnsReadAsBefore) {
  std::vector<std::string> keys;
  for (const ShownField& f : show(sample_plan(), PlanView::WhatIf)) keys.push_back(f.field.name);
  EXPECT_EQ(items(sample_plan(), PlanView::WhatIf, " "),
            (std::vector<std::string>{"rank 2", "cpus 8-15,136-143", "numa 1,3", "gpu 0000:47:00.0",
                                      "nics mlx5_1,eth0", "workers 6", "prefetch 12", "up to 48",
                                      "budget 32 GiB"}));
  EXPECT_EQ(keys, (std::vector<std::string>{"local_rank", "cpus", "numa", "gpu", "nics", "workers",
                                            "prefetch", "prefetch_max", "mem_budget"}));
}

}  // namespace
}  // namespace stoker
