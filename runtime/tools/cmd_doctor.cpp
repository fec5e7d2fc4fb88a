// `stoker doctor`: checks what silently starves loaders on this node and says how to fix it.
// Exit status: 0 when no check found an error, 1 otherwise (2 for bad arguments).
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "command.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::cli {

namespace {

struct Args {
  std::string dataset, python_exe;
  bool python = false, json = false;
};

const Command doctor_command(60, [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check what starves loaders here: file limits, /dev/shm, CPU quota, memory, "
      "storage, SMT, GPU locality, Python packages (exit 1 on an error finding)");
  cmd->add_option("--dataset", args->dataset, "dataset path: checks for network/spinning storage");
  cmd->add_flag(
      "--python", args->python,
      "check that torch, numpy and PIL come from one place ($PYTHON or /usr/bin/python3)");
  cmd->add_option("--python-exe", args->python_exe, "the interpreter for --python")
      ->needs(cmd->get_option("--python"));
  cmd->add_flag("--json", args->json, "one JSON object: {findings: [...], summary: {...}}");
  cmd->callback([args] {
    doctor::Options o;
    if (!args->dataset.empty()) o.dataset = args->dataset;
    o.python = args->python;
    o.python_exe = args->python_exe;
    doctor::Report report = doctor::run_doctor(o);
    std::fputs(args->json ? report.json().c_str() : report.text().c_str(), stdout);
    std::fflush(stdout);
    // main() returns 0 after a callback; an error finding must show in the exit status.
    if (int rc = report.exit_code()) std::exit(rc);
  });
});

}  // namespace

}  // namespace stoker::cli
