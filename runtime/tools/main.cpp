// The `stoker` command: plan, topo, bench, sampler, ... (one file per subcommand).
#include <algorithm>
#include <cstdio>
#include <exception>

#include "command.hpp"
#include "stoker/common/error.hpp"

namespace stoker::cli {

std::vector<Registered>& registry() {
  static std::vector<Registered> commands;
  return commands;
}

Command::Command(int order, Setup setup) { registry().push_back({order, std::move(setup)}); }

namespace {

// CLI11 reads an unsigned option with strtoull, which turns "-5" into 18446744073709551611:
// every unsigned option of every subcommand refuses a negative value, naming the option.
void refuse_negative_unsigned(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name().rfind("UINT", 0) != 0) continue;
    opt->check(CLI::Validator(
        [](std::string& value) -> std::string {
          const size_t first = value.find_first_not_of(" \t");
          if (first == std::string::npos || value[first] != '-') return "";
          return value + " is negative: give a whole number, 0 or more";
        },
        "", "non-negative"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    refuse_negative_unsigned(*sub);
  }
}

}  // namespace

}  // namespace stoker::cli

int main(int argc, char** argv) {
  CLI::App app{"stoker: Slurm-aware input pipelines that keep GPUs busy"};
  app.require_subcommand(1);
  auto& commands = stoker::cli::registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& c : commands) c.setup(app);
  stoker::cli::refuse_negative_unsigned(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
