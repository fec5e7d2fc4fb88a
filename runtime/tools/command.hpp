// Subcommands of `stoker` register themselves: each tools/cmd_*.cpp defines one
// static Command, so adding a subcommand touches no other file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace stoker::cli {

struct Command {
  // Adds the subcommand to `app`. The callback it sets runs the command and
  // throws stoker::Error on bad input (main prints it and exits 2).
  using Setup = std::function<void(CLI::App& app)>;
  Command(int order, Setup setup);  // order: position in `stoker --help`
};

struct Registered {
  int order;
  Command::Setup setup;
};
std::vector<Registered>& registry();

}  // namespace stoker::cli
