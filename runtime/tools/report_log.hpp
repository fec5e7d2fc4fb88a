// `stoker report`'s reading of the admin's job log (one JSON line per rank and step, written
// by the plugin: record/run_record.hpp): filtered, grouped per job step, ranked by input wait.
// A broken line is one message naming the file and line; the rest is still reported.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report_files.hpp"
#include "stoker/record/run_advice.hpp"
#include "stoker/record/run_record.hpp"

namespace stoker::cli {

struct ReportFilter {
  std::string
      since;  // lines at or after: "2026-12-01", "2026-12-01T10:00:00Z", or "7d", "12h", "30m"
  std::string user, partition, job;  // "" = all
};

// One job step, summed over its ranks' lines.
struct StepSummary {
  std::string job, step, user, partition, time;  // time: its latest line's
  std::set<std::string> nodes;
  uint64_t ranks = 0;                 // lines with a record
  double wait_sum = 0;                // of the ranks' wait shares
  double rate_sum = 0;                // of the ranks' samples/s
  RunRecord worst;                    // the rank that waited most (its timeline dropped when read)
  std::vector<std::string> problems;  // "rank N: missing: ..." (the first 8)
  uint64_t problem_count = 0;
  uint64_t from = UINT64_MAX, to = 0;  // the log's bytes that hold its lines (step_records),
                                       // in its files taken end to end (LogFile::base)
  double wait() const { return ranks ? wait_sum / static_cast<double>(ranks) : 0.0; }
};

// One user on one partition.
struct GroupSummary {
  std::string user, partition;
  uint64_t steps = 0;
  double wait_sum = 0;     // of the steps' mean waits
  std::string worst_step;  // "job 42 step 0"
  double worst_wait = 0;
};

struct JobReport {
  std::string log;                   // the --log arguments
  uint64_t lines = 0, broken = 0;    // lines read, lines that could not be read
  std::vector<StepSummary> steps;    // highest mean wait first
  std::vector<GroupSummary> groups;  // highest mean wait first
};

// Resolves a relative --since ("7d", "12h", "30m") against now to a UTC ISO time; an ISO date
// or time is kept. Throws stoker::Error naming --since for anything else.
std::string since_time(const std::string& since);

// Reads the log's files (report_files.hpp); each broken line is one line on `warn`
// ("FILE:LINE: what; skipped"), the first 20 of them, then a count.
JobReport read_job_log(const LogSet& logs, const ReportFilter& filter, std::FILE* warn);

// Each of `steps`' ranks' records with their timelines, read again from the log (only the
// bytes between each step's first and last line): the records of step i (job and step as in
// steps[i]) in rank order.
std::vector<std::vector<RunRecord>> step_records(const LogSet& logs,
                                                 const std::vector<StepSummary>& steps);

}  // namespace stoker::cli
