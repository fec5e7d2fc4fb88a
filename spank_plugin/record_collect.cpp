#include "record_collect.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

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

// The names in an open folder, "." and ".." left out.
std::vector<std::string> names_in(int fd) {
  std::vector<std::string> names;
  const int copy = ::dup(fd);  // closedir closes it, and resets nothing of `fd`
  DIR* d = copy < 0 ? nullptr : ::fdopendir(copy);
  if (!d) {
    if (copy >= 0) ::close(copy);
    return names;
  }
  ::rewinddir(d);  // the copy shares the position, at the end after an earlier round
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

// A user may leave folders in their step's folder, this many deep at most before the rest is
// left in place (and named).
constexpr int kMaxDepth = 16;

// Removes `name` in the open folder `parent` with everything in it; "" or what was left, as
// "NAME/...: what". Each folder is opened O_NOFOLLOW and its entries removed by name
// (unlinkat), so a link is removed itself, never followed. Runs as root in a folder its user
// owns: whatever is removed there, that user could have removed.
std::string remove_tree(int parent, const std::string& name, int depth) {
  Fd dir(
      ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (dir.fd < 0) {
    if (errno == ENOENT) return "";
    if (errno != ENOTDIR && errno != ELOOP)
      return name + ": cannot be opened: " + errno_text(errno);
    if (::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return "";
    return name + ": cannot be removed: " + errno_text(errno);
  }
  // A process of the step still writing (a daemon the job left) may add names meanwhile.
  for (int round = 0; round < 3; ++round) {
    for (const std::string& entry : names_in(dir.fd)) {
      if (::unlinkat(dir.fd, entry.c_str(), 0) == 0 || errno == ENOENT) continue;
      if (errno != EISDIR && errno != EPERM)
        return name + "/" + entry + ": cannot be removed: " + errno_text(errno);
      if (depth + 1 >= kMaxDepth)
        return name + "/" + entry + ": more than " + std::to_string(kMaxDepth) + " folders deep";
      if (const std::string left = remove_tree(dir.fd, entry, depth + 1); !left.empty())
        return name + "/" + left;
    }
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return "";
    if (errno != ENOTEMPTY && errno != EEXIST) return name + ": " + errno_text(errno);
  }
  return name + ": still being written to";
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
  // Only root writes the root, so a folder of this name is an earlier step's (a job id used
  // again, a requeued job, a node that crashed): its user's files, links among them, must
  // never be handed to this step's user. mkdir is exclusive: the folder made is a fresh one.
  if (::mkdirat(dir.fd, name.c_str(), 0700) != 0) {
    if (errno != EEXIST) folder_error(path, "cannot be made: " + errno_text(errno));
    if (const std::string left = remove_tree(dir.fd, name, 0); !left.empty())
      folder_error(path, "is an earlier step's, and cannot be removed: " + root + "/" + left);
    if (::mkdirat(dir.fd, name.c_str(), 0700) != 0)
      folder_error(path, "cannot be made: " + errno_text(errno));
  }
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

std::string remove_step_folder(const std::string& root, const std::string& name) {
  Fd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (top.fd < 0) return "";
  const std::string left = remove_tree(top.fd, name, 0);
  return left.empty() ? "" : root + "/" + left + " (the step's folder is left in place)";
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
