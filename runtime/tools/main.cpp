// The `stoker` command: plan, topo, bench, sampler, ... (one file per subcommand).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "command.hpp"
#include "stoker/common/error.hpp"

namespace stoker::cli {

std::vector<Registered>& registry() {
  static std::vector<Registered> commands;
  return commands;
}

Command::Command(int order, Setup setup) {
  registry().push_back({order, std::move(setup)});
}

namespace {

// CLI11 reads a whole-number option with strtoull/strtoll, which turns "-5" into
// 18446744073709551611 for an unsigned one and a number past the type's range into its
// largest value (`stoker sampler --size=18446744073709551616` printed indices without end):
// every whole-number option of every subcommand refuses both, naming the option.
void refuse_unrepresentable_numbers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const bool is_unsigned = type.rfind("UINT", 0) == 0;
    if (!is_unsigned && type.rfind("INT", 0) != 0) continue;
    opt->check(CLI::Validator(
        [is_unsigned](std::string& value) -> std::string {
          const size_t first = value.find_first_not_of(" \t");
          if (is_unsigned && first != std::string::npos && value[first] == '-')
            return value + " is negative: give a whole number, 0 or more";
          errno = 0;
          char* end = nullptr;
          if (is_unsigned) {
            (void)std::strtoull(value.c_str(), &end, 0);
          } else {
            (void)std::strtoll(value.c_str(), &end, 0);
          }
          if (errno == ERANGE) return value + " is out of range: give a smaller whole number";
          return "";
        },
        "", "in range"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    refuse_unrepresentable_numbers(*sub);
  }
}

// CLI11's message on one line: its newlines (a list of extra arguments, a nested
// subcommand's hint) become "; ".
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) {
    text.replace(at, 1, "; ");
  }
  return text;
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
  stoker::cli::refuse_unrepresentable_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are ParseErrors too (exit code 0): CLI11 prints them. A bad
    // argument is one line and exit status 2, as every other bad input (CLI11 itself would
    // print two or more lines and exit 105, 106, 109, ...).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::fprintf(stderr, "stoker: error: %s (stoker --help lists the arguments)\n",
                 stoker::cli::one_line(e.what()).c_str());
    return 2;
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "stoker: error: %s\n", stoker::cli::one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker: error: %s\n", stoker::cli::one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
