// The admin's job log (plugstack job_log=): slurmstepd appends each step's lines to it, as
// root, when the node's last task ended. Slurm-free, so unit tests link it.
//
// Nothing a user can create, and no filesystem, makes slurmstepd wait:
//  - the log is reached from / one folder at a time, each opened O_NOFOLLOW (a link anywhere in
//    the path is refused) and checked: owned by root, and writable by no one else unless sticky
//    (/tmp's mode, where users may add names but not replace root's);
//  - the file is opened O_NOFOLLOW | O_NONBLOCK (a planted FIFO cannot block the open) and
//    written only when it is a regular file of root's with one link, closed to others;
//  - all of it runs in a writer process that slurmstepd never waits for longer than a deadline
//    (kJobLogDeadline): a network filesystem whose server does not answer holds the writer in
//    the kernel, never the step. The writer is forked, not exec'd, and does only
//    async-signal-safe calls (open, fstat, write, close): a fork of a multithreaded slurmstepd
//    may not allocate. It is a grandchild, reparented to init at once, so slurmstepd's own
//    wait3() for its tasks never sees it, and a writer stopped at the deadline is reaped by init
//    whenever the kernel lets it go. Why not a local spool shipped later: `stoker report` run
//    right after srun (a script's next line) must find the step's lines, and a spool needs a
//    shipper (a daemon, or the next step) and grows in RAM-backed /run while the server is away.
// Each line goes out in one write() of the whole line (O_APPEND), so lines of nodes and steps
// ending at once never interleave. A write cut short (a full disk) is ended with a newline
// when it can be; and a writer that finds the log not ending in a newline starts with one: no
// line is ever glued to a part. close() is checked: NFS reports ENOSPC, EDQUOT and ESTALE there.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace stoker::spank {

// The file this node appends to: `job_log` itself, or, when it ends with '/' (a folder),
// <job_log><node>.jsonl, the node's name made safe for a file name. Decided by the argument's
// text alone, never by stat() at a step: a folder that is briefly unmounted must not turn into
// one file every node appends to. One file per node is what a log on NFS needs: its clients
// compute the end of the file themselves, so two nodes appending to one file at once can
// overwrite each other's lines (open(2), O_APPEND); one node's appends are serialised by its
// kernel.
std::string job_log_file(const std::string& job_log, const std::string& node);

// The most the step's end waits for the writer.
inline constexpr std::chrono::milliseconds kJobLogDeadline{3000};

struct JobLogOptions {
  bool make_folder = false;  // make the log's folder (0755) when it is missing: job_log= a folder
  std::chrono::milliseconds deadline = kJobLogDeadline;
  // A local folder of root's (the record root) the writer locks (flock) while it writes: a
  // writer stuck on a server that does not answer holds it, so the next ones wait on the lock
  // (interruptibly, and are stopped at their deadline) instead of each adding a process stuck
  // in the kernel. "" = none.
  std::string lock_folder;
};

// Appends each line and a newline to the absolute `path`, as the header says. Returns "" when
// every line was written and the file closed, else one line naming the file (or the folder at
// fault), what is wrong or what to do, and how many of the lines were written.
std::string append_to_log(const std::string& path, const std::vector<std::string>& lines,
                          const JobLogOptions& options = {});

}  // namespace stoker::spank
