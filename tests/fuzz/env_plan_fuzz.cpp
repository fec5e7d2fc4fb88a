// The STOKER_* environment plan (read_plan), one NAME=VALUE per line: a plan it accepts
// must come back the same through plan_to_env (what the plugin exports is what it reads).
#include <map>

#include "fuzz_support.hpp"
#include "stoker/plan/plan_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  std::map<std::string, std::string> vars;
  for (const std::string& line : fuzz::lines_of(fuzz::as_text(data, size))) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  fuzz::expect_clean([&] {
    std::optional<Plan> plan = read_plan(env_from(vars));
    if (!plan) return;
    const EnvVars exported = plan_to_env(*plan);
    std::optional<Plan> again =
        read_plan(env_from(std::map<std::string, std::string>(exported.begin(), exported.end())));
    plan->reasons.clear();
    again->reasons.clear();
    if (!(*plan == *again))
      fuzz::finding("plan_to_env(read_plan(env)) reads back another plan", "");
  });
  return 0;
}
