// `stoker report`'s three outputs of a JobReport (report_log.hpp): text, JSON, and one
// self-contained HTML page (no network: inline SVG plots and node pictures, no script).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report_log.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::cli {

// The first `top` steps in detail, then every user and partition.
std::string report_text(const JobReport& report, size_t top);
std::string report_json(const JobReport& report, size_t top);

// `records[i]`: step i's records with their timelines (step_records). `topology`: the nodes'
// picture is drawn on it (null: no pictures; `topology_note` says why).
std::string report_html(const JobReport& report, size_t top,
                        const std::vector<std::vector<RunRecord>>& records,
                        const Topology* topology, const std::string& topology_note);

// A step's plan in one line: "profile cv: 4 cores (0-3), 3 workers, prefetch 2..8, pinned".
std::string plan_text(const RunRecord& r);
// "41 %"
std::string percent(double share);

}  // namespace stoker::cli
