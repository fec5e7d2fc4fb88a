// The plugin's STOKER_* plan checked against the machine at every entry point that uses
// one: CPUs and NUMA nodes that do not exist, a zero budget and a budget below one batch
// are errors naming the variable. They used to be accepted, and the loader then failed
// with a message that did not name the variable (or ran on a budget of 0).
#include "loader_fixture.hpp"
#include "run_command.hpp"
#include "scoped_env.hpp"
#include "stoker/plan/plan_env.hpp"

using namespace stoker;

namespace {

// The plugin's environment for this machine (test_plan's CPUs and node 0), with `name`
// set to `value`.
void export_plan_with(test::ScopedEnv& env, const std::string& name, const std::string& value) {
  for (const auto& [k, v] : plan_to_env(test::test_plan(1))) env.set(k, v.c_str());
  env.set(name, value.c_str());
}

std::string factory_error(const test::TokenSetup& t) {
  try {
    LoaderOptions options = test::test_options(8, 1);
    options.plan.reset();  // the factory plans: from the plugin's STOKER_* variables
    auto loader = Loader::for_this_process(t.source, t.copy, options);
    return "(accepted)";
  } catch (const Error& e) {
    return e.what();
  }
}

const std::pair<std::string, std::string> kRefused[] = {
    {"STOKER_CPUS=999-1000", "STOKER_CPUS: names CPUs 999-1000 that this machine does not have"},
    {"STOKER_NUMA=7", "STOKER_NUMA: names NUMA node 7, which this machine does not have"},
    {"STOKER_MEM_BUDGET=0", "STOKER_MEM_BUDGET: is 0: a budget of 0 bytes holds no batch"},
    // A batch of 8 windows of 65 uint16 tokens is over 1000 bytes.
    {"STOKER_MEM_BUDGET=100", "STOKER_MEM_BUDGET: is 100 bytes, below the "},
};

TEST(FaultsEnvContract, TheLoaderFactoryRefusesAPlanThisMachineCannotHold) {
  test::TokenSetup t(100, 64);
  {
    test::ScopedEnv env;
    export_plan_with(env, "STOKER_WORKERS", "1");
    EXPECT_EQ(factory_error(t), "(accepted)");
  }
  for (const auto& [change, expected] : kRefused) {
    test::ScopedEnv env;
    const size_t eq = change.find('=');
    export_plan_with(env, change.substr(0, eq), change.substr(eq + 1));
    const std::string got = factory_error(t);
    EXPECT_EQ(got.rfind(expected, 0), 0u) << change << ": " << got;
  }
}

TEST(FaultsEnvContract, StokerBenchRefusesAPlanThisMachineCannotHold) {
  if (!std::filesystem::exists(test::stoker_cli())) GTEST_SKIP() << "stoker is not built";
  test::TokenSetup t(100, 64);
  std::string plugin_env;
  for (const auto& [k, v] : plan_to_env(test::test_plan(1))) plugin_env += " " + k + "='" + v + "'";
  const std::string bench = test::stoker_cli() + " bench tokens " + t.dir.file("tokens.bin") +
                            " --seq-len 64 --batch-size 8 --epochs 1 2>&1";
  EXPECT_EQ(test::run_command("env" + plugin_env + " " + bench).status, 0);
  for (const auto& [change, expected] : kRefused) {
    const auto r = test::run_command("env" + plugin_env + " " + change + " " + bench);
    EXPECT_NE(r.status, 0) << change << "\n" << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << change << "\n" << r.out;
  }
}

}  // namespace
