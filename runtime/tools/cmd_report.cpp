// `stoker report`: which jobs starve their GPUs, from the admin's job log (the plugin's
// job_log=): job steps by input wait, per user and partition, each with the plan it ran and
// a change in the planner's terms (run_advice.hpp). Text, --json, or --html OUT.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "command.hpp"
#include "report_log.hpp"
#include "report_output.hpp"
#include "stoker/common/error.hpp"

namespace stoker::cli {

namespace {

struct Args {
  std::vector<std::string> logs;
  std::string html, topology;
  ReportFilter filter;
  bool json = false;
  size_t top = 20;
};

// The topology the node pictures are drawn on, or why there is none.
std::optional<Topology> picture_topology(const std::string& xml, std::string* note) {
  try {
    return xml.empty() ? load_topology(false) : load_topology_xml(xml);
  } catch (const std::exception& e) {
    *note = e.what();
    return std::nullopt;
  }
}

void write_page(const std::string& path, const std::string& html) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << html;
  if (!out || !out.flush())
    throw Error(path, std::string("cannot write the HTML report: ") + std::strerror(errno),
                "give --html a writable path");
}

void run(const Args& a) {
  const LogSet logs(a.logs);
  const JobReport report = read_job_log(logs, a.filter, stderr);
  if (!a.html.empty()) {
    std::string note;
    const std::optional<Topology> topo = picture_topology(a.topology, &note);
    const std::vector<StepSummary> shown(
        report.steps.begin(), report.steps.begin() + std::min(a.top, report.steps.size()));
    write_page(a.html, report_html(report, a.top, step_records(logs, shown),
                                   topo ? &*topo : nullptr, note));
  }
  const std::string text = a.json ? report_json(report, a.top) : report_text(report, a.top);
  std::fputs(text.c_str(), stdout);
  if (!a.html.empty()) std::printf("HTML report: %s\n", a.html.c_str());
}

const Command report_command(60, [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  Args& a = *args;
  CLI::App* cmd = app.add_subcommand(
      "report", "Which jobs starve their GPUs: the admin's job log, highest input wait first");
  cmd->add_option("--log", a.logs,
                  "the job log (the plugin's job_log=): a file, or a folder of node files and "
                  "their rotated ones (.1, .gz); several --log are read as one log")
      ->required();
  cmd->add_option("--since", a.filter.since,
                  "only lines at or after a UTC date or time (2026-12-01, 2026-12-01T10:00:00Z) "
                  "or within an age (7d, 12h, 30m)");
  cmd->add_option("--user", a.filter.user, "only this user's jobs");
  cmd->add_option("--partition", a.filter.partition, "only this partition's jobs");
  cmd->add_option("--job", a.filter.job, "only this job (its id)");
  cmd->add_option("--top", a.top, "job steps shown in detail (default 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", a.json, "one JSON document instead of the text");
  cmd->add_option("--html", a.html,
                  "also write one self-contained HTML page here (plots, node pictures)");
  cmd->add_option("--topology", a.topology,
                  "hwloc XML of the nodes the pictures are drawn on (default: this machine)");
  cmd->callback([args] { run(*args); });
});

}  // namespace

}  // namespace stoker::cli
