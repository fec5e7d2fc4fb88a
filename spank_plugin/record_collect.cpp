#include "record_collect.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"

namespace stoker::spank {

namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

std::string errno_text(int err) {
  return std::strerror(err);
}

[[noreturn]] void folder_error(const std::string& path, const std::string& what) {
  throw Error(path, what,
              "give record_root a folder owned by root and writable by root only (plugstack.conf)");
}

// The root folder, open; made when missing. Throws when it may not be trusted.
int open_root(const std::string& root) {
  if (::mkdir(root.c_str(), 0755) != 0 && errno != EEXIST)
    folder_error(root, "cannot be made: " + errno_text(errno));
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) folder_error(root, "cannot be opened as a folder: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    ::close(fd);
    folder_error(root, "is not owned by root or is writable by others");
  }
  return fd;
}

JobLogLine line_for(const StepIdentity& who, uint64_t rank) {
  JobLogLine l;
  l.time = who.time;
  l.job = who.job;
  l.step = who.step;
  l.node = who.node;
  l.user = who.user;
  l.partition = who.partition;
  l.rank = rank;
  return l;
}

void set_problem(JobLogLine& l, const char* status, const std::string& path,
                 const std::string& what) {
  l.status = status;
  l.problem = path + ": " + what;
}

}  // namespace

bool mounts_reach(const std::string& container_mounts, const std::string& folder) {
  // Each mount is SRC[:DST[:FLAGS]]; DST defaults to SRC.
  for (std::string_view mount : split(container_mounts, ',')) {
    const std::vector<std::string_view> parts = split(mount, ':');
    std::string src(parts[0]);
    std::string dst(parts.size() > 1 ? parts[1] : parts[0]);
    while (src.size() > 1 && src.back() == '/') src.pop_back();
    while (dst.size() > 1 && dst.back() == '/') dst.pop_back();
    if (src.empty() || src != dst) continue;  // elsewhere inside: the exported path misses it
    if (folder == src || src == "/" || folder.rfind(src + "/", 0) == 0) return true;
  }
  return false;
}

std::string missing_record_problem(const std::string& folder, const StepIdentity& who) {
  if (!who.container_image.empty() && !mounts_reach(who.container_mounts, folder)) {
    return "no record (the rank ran in a container (--container-image) without the record "
           "folder: mount it at its own path, --container-mounts=" +
           folder.substr(0, folder.rfind('/')) +
           " or the site's enroot mounts.d, see the user guide's Containers; or it made no "
           "stoker loader, or was killed first)";
  }
  return "no record (the rank made no stoker loader, or was killed first)";
}

namespace {

// Reads one record into `l`: "ok" or what is wrong.
void read_record(int dir, const std::string& folder, const StepIdentity& who, JobLogLine& l) {
  const std::string file = run_record_file(l.rank);
  const std::string path = folder + "/" + file;
  Fd fd(::openat(dir, file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.fd < 0) {
    if (errno == ENOENT)
      return set_problem(l, "missing", path, missing_record_problem(folder, who));
    if (errno == ELOOP) return set_problem(l, "bad", path, "is a symbolic link: not read");
    return set_problem(l, "bad", path, "cannot be opened: " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return set_problem(l, "bad", path, "cannot be examined");
  if (!S_ISREG(st.st_mode))
    return set_problem(l, "bad", path,
                       "is not a regular file (a FIFO, socket or device): not read");
  if (st.st_uid != who.uid) return set_problem(l, "bad", path, "is not the job user's: not read");
  if (st.st_nlink != 1) return set_problem(l, "bad", path, "has other hard links: not read");
  if (static_cast<uint64_t>(st.st_size) > kMaxRecordBytes)
    return set_problem(l, "bad", path,
                       "is larger than " + std::to_string(kMaxRecordBytes) + " bytes: not read");
  std::string text(kMaxRecordBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return set_problem(l, "bad", path, "cannot be read: " + errno_text(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  try {
    RunRecord r = parse_run_record(text, path);
    if (r.job != who.job || r.step != who.step || r.rank != l.rank) {
      return set_problem(l, "bad", path,
                         "names job " + r.job.substr(0, 20) + " step " + r.step.substr(0, 20) +
                             " rank " + std::to_string(r.rank) + ", not this step's rank");
    }
    l.status = "ok";
    l.record = std::move(r);
  } catch (const Error& e) {
    l.status = "bad";
    l.problem = e.where() + ": " + e.problem();
  }
}

}  // namespace

std::string step_folder_name(uint32_t job, uint32_t step, uint32_t node_id) {
  return std::to_string(job) + "." + std::to_string(step) + "." + std::to_string(node_id);
}

std::string make_step_folder(const std::string& root, const std::string& name, uid_t uid,
                             gid_t gid) {
  Fd dir(open_root(root));
  const std::string path = root + "/" + name;
  if (::mkdirat(dir.fd, name.c_str(), 0700) != 0 && errno != EEXIST)
    folder_error(path, "cannot be made: " + errno_text(errno));
  // Only root writes the root: an existing folder is a stale one of this same step id.
  Fd step(::openat(dir.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (step.fd < 0) folder_error(path, "cannot be opened as a folder: " + errno_text(errno));
  if (::fchown(step.fd, uid, gid) != 0 || ::fchmod(step.fd, 0700) != 0)
    folder_error(path, "cannot be given to the job's user: " + errno_text(errno));
  return path;
}

std::vector<JobLogLine> collect_records(const std::string& root, const std::string& name,
                                        const std::vector<uint64_t>& ranks,
                                        const StepIdentity& who) {
  std::vector<JobLogLine> lines;
  for (uint64_t rank : ranks) lines.push_back(line_for(who, rank));
  const std::string folder = root + "/" + name;
  Fd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  Fd dir(top.fd < 0
             ? -1
             : ::openat(top.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  for (JobLogLine& l : lines) {
    if (dir.fd < 0) {
      set_problem(l, "missing", folder, "the step's record folder is gone");
    } else {
      read_record(dir.fd, folder, who, l);
    }
  }
  return lines;
}

std::string job_log_file(const std::string& job_log, const std::string& node) {
  struct stat st {};
  const bool folder =
      job_log.back() == '/' || (::stat(job_log.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  if (!folder) return job_log;
  if (job_log.back() == '/') (void)::mkdir(job_log.c_str(), 0755);  // else append says why
  std::string name = node.empty() ? "unknown-node" : node;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  if (name.front() == '.') name.front() = '_';
  return job_log + (job_log.back() == '/' ? "" : "/") + name + ".jsonl";
}

std::string append_to_log(const std::string& path, const std::vector<std::string>& lines) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
               0640));
  if (fd.fd < 0) return path + ": cannot open the job log: " + errno_text(errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return path + ": the job log is not a regular file: nothing written";
  size_t written = 0;
  for (const std::string& line : lines) {
    const std::string text = line + "\n";
    ssize_t n;
    do {
      n = ::write(fd.fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(text.size())) {
      const std::string why = n < 0 ? errno_text(errno) : "a short write (the disk is full?)";
      // A part written stays: truncating could cut another node's line; the report names
      // the broken line and reads the rest.
      return path + ": cannot append to the job log: " + why + " (" + std::to_string(written) +
             " of " + std::to_string(lines.size()) + " lines written)";
    }
    ++written;
  }
  return "";
}

std::string remove_step_folder(const std::string& root, const std::string& name,
                               const std::vector<uint64_t>& ranks) {
  Fd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (top.fd < 0) return "";
  {
    Fd dir(::openat(top.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.fd < 0) return "";
    for (uint64_t rank : ranks) {
      const std::string file = run_record_file(rank);
      (void)::unlinkat(dir.fd, file.c_str(), 0);
      (void)::unlinkat(dir.fd, (file + ".tmp").c_str(), 0);
    }
  }
  if (::unlinkat(top.fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return root + "/" + name + ": left in place: " + errno_text(errno);
  return "";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace stoker::spank
