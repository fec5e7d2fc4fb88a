// The files `stoker report --log` reads. Each --log is a file, or a folder whose log files
// are all read: the plugin's job_log= folder (one FOLDER/<node>.jsonl per node, which a log on
// NFS needs) and what logrotate leaves beside each (NAME.1, NAME.2.gz, ...). A .gz is unpacked
// into a temporary file for the report's parallel reads by offset; the set removes it.
// The files are seen end to end, as one log: a line's place is its file's `base` plus its
// offset in the file (StepSummary::from/to).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::cli {

struct LogFile {
  std::string name;  // as the user knows it, for messages: "jobs.jsonl.2.gz"
  std::string path;  // what is read: the file itself, or a .gz's unpacked copy
  uint64_t base = 0, bytes = 0;
};

class LogSet {
 public:
  // Throws stoker::Error naming an argument that cannot be read, a folder without log
  // files, or a .gz that cannot be unpacked.
  explicit LogSet(const std::vector<std::string>& args);
  ~LogSet();
  LogSet(const LogSet&) = delete;
  LogSet& operator=(const LogSet&) = delete;

  const std::vector<LogFile>& files() const { return files_; }
  std::string describe() const;  // the arguments as given, ", " between them

 private:
  std::vector<std::string> args_;
  std::vector<LogFile> files_;
  std::vector<std::string> unpacked_;  // temporary files to remove
};

}  // namespace stoker::cli
