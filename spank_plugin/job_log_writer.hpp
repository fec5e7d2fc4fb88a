// The job log's writer process (job_log.hpp): what it is given, what it reports, and its body.
// Everything from run_writer's start to its _exit is async-signal-safe (open, fstat, write,
// close, flock): it runs in a fork of slurmstepd, a multithreaded process, and may not
// allocate or take a lock another thread held at the fork. So the job is laid out before the
// fork, and the report is plain data through a pipe.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stoker::spank {

// Where the writer stopped.
enum class Stage : int32_t {
  Done,
  Folder,       // a folder of the path cannot be opened (`err`; `link`: it is a link)
  FolderOwner,  // a folder is not root's (`uid`)
  FolderMode,   // a folder others may write to, not sticky
  MakeFolder,   // the log's folder cannot be made
  Open,         // the file cannot be opened (`err`)
  NotRegular,   // a FIFO, socket or device
  Links,        // more than one link (`links`)
  Owner,        // not root's (`uid`)
  FileMode,     // others may write to it
  Write,        // a write failed (`err`) or was cut short (`err` 0)
  Close,        // close() failed (`err`)
};

struct Report {
  Stage stage = Stage::Done;
  int32_t err = 0;
  int32_t at = -1;  // the folder at fault: an index into WriterJob::folders, -1 for "/"
  int32_t link = 0;
  uint32_t uid = 0;
  uint32_t links = 0;
  uint32_t written = 0;  // lines written whole
};

// What the writer needs, laid out before the fork.
struct WriterJob {
  std::vector<std::string> folders;  // the folders of the path below "/", in order
  std::string file;                  // the log's name in the last of them
  bool make_last = false;
  std::string lock;          // a folder to flock while writing; "" = none
  std::string text;          // every line and its newline
  std::vector<size_t> ends;  // where each line ends in `text`
};

// The writer: closes every descriptor but `out`, blocks every signal, writes its pid and then,
// after the lock (job.lock) and the lines, its Report into `out`, and _exits.
[[noreturn]] void run_writer(const WriterJob& job, int out);

}  // namespace stoker::spank
