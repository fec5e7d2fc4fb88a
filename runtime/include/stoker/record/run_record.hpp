// The run record: what one rank's loader planned and what then happened, written by the
// runtime at loader close (also at exit and on SIGTERM; once), collected by the plugin into
// the admin's job log (one line per rank), and read by `stoker report`.
//
// Here, below the loader and the plugin, because both sides speak it: the runtime writes
// it (loader/run_recorder.cpp), slurmstepd reads it as root from a folder the job's user
// owns (spank_plugin/record_collect.cpp): parse_run_record() therefore takes nothing on
// trust: a bounded size, known keys only, each of its type and range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/record/run_record_data.hpp"

namespace stoker {

// The folder the plugin gives each task of a step for its record (one file per rank).
inline constexpr const char* kRunRecordDirVar = "STOKER_RUN_RECORD_DIR";
// The record's file in that folder: "rank-<rank>.json".
std::string run_record_file(uint64_t rank);
// The largest record the collector reads; a record is about 2 KiB.
inline constexpr size_t kMaxRecordBytes = 16 * 1024;
// The longest job log line; a line that would be longer drops the record's timeline.
inline constexpr size_t kMaxLogLine = 4000;
// The most timeline points a record may have.
inline constexpr size_t kMaxTimelinePoints = 64;

// One line of JSON (no newline).
std::string to_json(const RunRecord& r);
// Parses a record strictly: JSON, an object of the known keys only, each of its type and
// range, at most kMaxRecordBytes. Throws stoker::Error (where = `where`) saying what is wrong.
RunRecord parse_run_record(std::string_view text, const std::string& where);

// One line of the admin's job log: the collector's view and, when it could be read, the record.
struct JobLogLine {
  std::string time;  // UTC, ISO 8601 ("2026-12-02T16:03:40Z")
  std::string job, step, node, user, partition;
  uint64_t rank = 0;
  std::string status;   // "ok", or what was wrong: "missing", "bad"
  std::string problem;  // for a status other than ok: one line naming the file
  std::optional<RunRecord> record;
  bool operator==(const JobLogLine&) const = default;
};

// One line of JSON (no newline), under kMaxLogLine bytes: the timeline is left out when
// it would not fit, and the problem text is cut.
std::string to_json(const JobLogLine& line);
// Parses a job log line strictly; throws stoker::Error (where = `where`). Without
// `with_timeline` the record's timeline is left empty (its points still checked as JSON):
// a reader of many lines that needs none of them (`stoker report`'s summary) is faster.
JobLogLine parse_job_log_line(std::string_view text, const std::string& where,
                              bool with_timeline = true);

}  // namespace stoker
