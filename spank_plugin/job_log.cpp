#include "job_log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "job_log_writer.hpp"

namespace stoker::spank {

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// The path's folders and the file's name; false when `path` is not an absolute file path.
bool split_path(const std::string& path, WriterJob& job) {
  if (path.empty() || path.front() != '/' || path.back() == '/') return false;
  size_t start = 1;
  for (size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1) {
    if (slash > start) job.folders.push_back(path.substr(start, slash - start));
  }
  job.file = path.substr(start);
  for (const std::string& part : job.folders) {
    if (part == "." || part == "..") return false;
  }
  return job.file != "." && job.file != "..";
}

std::string folder_path(const WriterJob& job, int32_t at) {
  std::string path;
  for (int32_t i = 0; i <= at; ++i) path += "/" + job.folders[static_cast<size_t>(i)];
  return path.empty() ? "/" : path;
}

// What a report means, in slurmd's log.
std::string describe(const Report& r, const WriterJob& job, const std::string& path) {
  const std::string folder = folder_path(job, r.at);
  const std::string cannot = path + ": cannot open the job log: ";
  const std::string uid = std::to_string(r.uid);
  switch (r.stage) {
    case Stage::Done:
      return "";
    case Stage::Folder:
      if (r.link)
        return cannot + folder +
               ": is a symbolic link: not followed (name the real path in job_log=)";
      return cannot + folder + ": " + errno_text(r.err);
    case Stage::FolderOwner:
      return cannot + folder + ": is owned by uid " + uid +
             ", not root: its user could replace the log (give the folder to root, closed to "
             "others: chown root; chmod go-w)";
    case Stage::FolderMode:
      return cannot + folder +
             ": is writable by others without the sticky bit: a user could replace the log "
             "or plant its name (chmod go-w; on a network filesystem export it without "
             "root_squash, or keep the log on a local disk)";
    case Stage::MakeFolder:
      return cannot + folder + ": cannot be made: " + errno_text(r.err);
    case Stage::Open:
      if (r.err == ELOOP) return cannot + "is a symbolic link: not written (remove it)";
      if (r.err == EISDIR)
        return cannot + "is a folder: for one file per node in it, end the argument with '/': " +
               "job_log=" + path + "/";
      return cannot + errno_text(r.err);
    case Stage::NotRegular:
      return cannot + "is not a regular file (a FIFO, socket or device): not written (remove it)";
    case Stage::Links:
      return cannot + "has " + std::to_string(r.links) +
             " hard links: not written (another name could read or change its lines; remove it)";
    case Stage::Owner:
      return cannot + "is owned by uid " + uid +
             ", not root: not written (its user could edit other users' lines; remove it)";
    case Stage::FileMode:
      return cannot + "is writable by group or others: not written (chmod go-w " + path + ")";
    case Stage::Write:
      return path + ": cannot append to the job log: " +
             (r.err ? errno_text(r.err) : "a write was cut short (the disk is full?)");
    case Stage::Close:
      return path + ": closing the job log failed: " + errno_text(r.err) +
             ": the lines written may be lost (a network filesystem reports a full disk, a "
             "quota or a lost file only there)";
  }
  return path + ": the job log's writer reported nonsense";
}

}  // namespace

std::string job_log_file(const std::string& job_log, const std::string& node) {
  if (job_log.empty() || job_log.back() != '/') return job_log;
  std::string name = node.empty() ? "unknown-node" : node;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  if (name.front() == '.') name.front() = '_';
  return job_log + name + ".jsonl";
}

std::string append_to_log(const std::string& path, const std::vector<std::string>& lines,
                          const JobLogOptions& options) {
  const std::string count = " of " + std::to_string(lines.size()) + " lines written";
  WriterJob job;
  if (!split_path(path, job)) return path + ": the job log must be an absolute file path";
  job.make_last = options.make_folder;
  job.lock = options.lock_folder;
  for (const std::string& line : lines) {
    job.text += line + "\n";
    job.ends.push_back(job.text.size());
  }
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0)
    return path + ": cannot start the job log's writer: " + errno_text(errno) + "; 0" + count;
  const auto deadline = std::chrono::steady_clock::now() + options.deadline;
  const pid_t middle = ::fork();
  if (middle == 0) {  // reparents the writer to init at once: nothing for slurmstepd to reap
    const pid_t writer = ::fork();
    if (writer == 0) run_writer(job, pipe[1]);
    ::_exit(writer < 0 ? 1 : 0);
  }
  ::close(pipe[1]);
  if (middle < 0) {
    ::close(pipe[0]);
    return path + ": cannot start the job log's writer: " + errno_text(errno) + "; 0" + count;
  }
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  // The writer's pid, then its report; or nothing by the deadline.
  char got[sizeof(pid_t) + sizeof(Report)];
  size_t have = 0;
  bool ended = false;
  while (have < sizeof got) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{pipe[0], POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::read(pipe[0], got + have, sizeof got - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ended = true;
      break;
    }
    have += static_cast<size_t>(n);
  }
  ::close(pipe[0]);
  if (have == sizeof got) {
    Report r;
    std::memcpy(&r, got + sizeof(pid_t), sizeof r);
    const std::string problem = describe(r, job, path);
    return problem.empty() ? "" : problem + "; " + std::to_string(r.written) + count;
  }
  if (ended)
    return path + ": the job log's writer ended without a report; the step's " +
           std::to_string(lines.size()) + " line(s) may be missing";
  if (have >= sizeof(pid_t)) {
    pid_t writer = 0;
    std::memcpy(&writer, got, sizeof writer);
    ::kill(writer, SIGKILL);  // it still holds the pipe: it is alive
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline).count();
  return path + ": the filesystem did not answer within " + std::to_string(ms) +
         " ms (a network filesystem whose server is away?): the writer was stopped, and the " +
         "step's " + std::to_string(lines.size()) + " line(s) may be missing or written later";
}

}  // namespace stoker::spank
