// The `stoker` command: plan, topo, bench, sampler, ... (one file per subcommand).
#include <algorithm>
#include <cstdio>
#include <exception>

#include "command.hpp"
#include "stoker/error.hpp"

namespace stoker::cli {

std::vector<Registered>& registry() {
  static std::vector<Registered> commands;
  return commands;
}

Command::Command(int order, Setup setup) { registry().push_back({order, std::move(setup)}); }

}  // namespace stoker::cli

int main(int argc, char** argv) {
  CLI::App app{"stoker: Slurm-aware input pipelines that keep GPUs busy"};
  app.require_subcommand(1);
  auto& commands = stoker::cli::registry();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& c : commands) c.setup(app);
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
