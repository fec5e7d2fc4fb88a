#include "job_log_writer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace stoker::spank {

namespace {

// Root's: uid 0, or this process's user (which stands for root in unit tests not run as root).
bool trusted_owner(uid_t uid) {
  return uid == 0 || uid == ::geteuid();
}

void close_other_fds(int keep) {
  bool closed = false;
#ifdef SYS_close_range
  closed = (keep == 0 || ::syscall(SYS_close_range, 0u, unsigned(keep - 1), 0u) == 0) &&
           ::syscall(SYS_close_range, unsigned(keep + 1), ~0u, 0u) == 0;
#endif
  if (closed) return;  // else a kernel before 5.9: the descriptors a stepd may hold, one by one
  rlimit lim{};
  rlim_t top = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < top) top = lim.rlim_cur;
  for (int fd = 0; fd < static_cast<int>(top); ++fd) {
    if (fd != keep) ::close(fd);
  }
}

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A folder of the path, open, is one a user cannot replace the log's name in.
bool folder_trusted(int fd, Report& r) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.stage = Stage::Folder;
    r.err = errno;
    return false;
  }
  if (!trusted_owner(st.st_uid)) {
    r.stage = Stage::FolderOwner;
    r.uid = st.st_uid;
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
    r.stage = Stage::FolderMode;
    return false;
  }
  return true;
}

// Opens the folders from "/" down, never through a link; the last one's descriptor, or -1.
int open_folder(const WriterJob& job, Report& r) {
  int dir = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || !folder_trusted(dir, r)) {
    if (dir < 0) r = {Stage::Folder, errno};
    if (dir >= 0) ::close(dir);
    return -1;
  }
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  for (size_t i = 0; i < job.folders.size(); ++i) {
    const char* name = job.folders[i].c_str();
    r.at = static_cast<int32_t>(i);
    int next = ::openat(dir, name, flags);
    if (next < 0 && errno == ENOENT && job.make_last && i + 1 == job.folders.size()) {
      if (::mkdirat(dir, name, 0755) != 0 && errno != EEXIST) {
        r.stage = Stage::MakeFolder;
        r.err = errno;
        ::close(dir);
        return -1;
      }
      next = ::openat(dir, name, flags);
    }
    if (next < 0) {
      r.stage = Stage::Folder;
      r.err = errno;
      struct stat st {};
      r.link = ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      ::close(dir);
      return -1;
    }
    ::close(dir);
    dir = next;
    if (!folder_trusted(dir, r)) {
      ::close(dir);
      return -1;
    }
  }
  r.at = -1;
  return dir;
}

// The log, open for appending, when it is a file only root may change; else -1.
int open_log(int dir, const WriterJob& job, Report& r) {
  const int fd =
      ::openat(dir, job.file.c_str(),
               O_RDWR | O_APPEND | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0640);
  struct stat st {};
  if (fd < 0) {
    // Say what stands there: a kernel refuses some names another user planted in a sticky
    // folder with EACCES (a link; a FIFO or file under fs.protected_fifos, protected_regular).
    r = {Stage::Open, errno};
    if (::fstatat(dir, job.file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
    if (S_ISLNK(st.st_mode)) {
      r.err = ELOOP;
    } else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      r.stage = Stage::NotRegular;
    } else if (S_ISREG(st.st_mode) && !trusted_owner(st.st_uid)) {
      r.stage = Stage::Owner;
      r.uid = st.st_uid;
    }
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    r = {Stage::Open, errno};
  } else if (!S_ISREG(st.st_mode)) {
    r.stage = Stage::NotRegular;
  } else if (st.st_nlink != 1) {
    r.stage = Stage::Links;
    r.links = static_cast<uint32_t>(st.st_nlink);
  } else if (!trusted_owner(st.st_uid)) {
    r.stage = Stage::Owner;
    r.uid = st.st_uid;
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    r.stage = Stage::FileMode;
  } else {
    // A part line left by a write cut short (a full disk, an earlier writer stopped): end it
    // first, so that this step's first line is not glued to it.
    char last = '\n';
    if (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n' &&
        !write_all(fd, "\n", 1)) {
      r = {Stage::Write, errno};
    } else {
      return fd;
    }
  }
  ::close(fd);
  return -1;
}

Report write_lines(const WriterJob& job) {
  Report r;
  const int dir = open_folder(job, r);
  if (dir < 0) return r;
  const int fd = open_log(dir, job, r);
  ::close(dir);
  if (fd < 0) return r;
  size_t start = 0;
  for (const size_t end : job.ends) {
    ssize_t n;
    do {
      n = ::write(fd, job.text.data() + start, end - start);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(end - start)) {
      r.stage = Stage::Write;
      r.err = n < 0 ? errno : 0;
      if (n > 0) (void)::write(fd, "\n", 1);  // end the part; on a full disk the next writer does
      break;
    }
    ++r.written;
    start = end;
  }
  if (::close(fd) != 0 && r.stage == Stage::Done) r = {Stage::Close, errno, -1, 0, 0, 0, r.written};
  return r;
}

}  // namespace

void run_writer(const WriterJob& job, int out) {
  sigset_t all;
  ::sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  close_other_fds(out);
  const pid_t self = ::getpid();
  (void)write_all(out, &self, sizeof self);
  if (!job.lock.empty()) {  // held until the writer ends
    const int lock = ::open(job.lock.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (lock >= 0) (void)::flock(lock, LOCK_EX);
  }
  const Report r = write_lines(job);
  (void)write_all(out, &r, sizeof r);
  ::_exit(0);
}

}  // namespace stoker::spank
