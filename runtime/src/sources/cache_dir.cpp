#include "sources/cache_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/unique_fd.hpp"
#include "stoker/common/launch_env.hpp"

namespace stoker {

namespace {

// The base folder (the user's setting), "" when caching is off.
std::string cache_base() {
  const EnvGetter env = process_env();
  if (const auto dir = env("STOKER_CACHE_DIR")) {
    return dir->empty() || *dir == "none" ? std::string() : *dir;
  }
  if (const auto xdg = env_nonempty(env, "XDG_CACHE_HOME")) return *xdg + "/stoker";
  if (const auto home = env_nonempty(env, "HOME")) return *home + "/.cache/stoker";
  return {};
}

std::string uid_text() {
  return std::to_string(static_cast<unsigned long>(::geteuid()));
}

// Why a file or folder of this user's cache cannot be trusted ("" when it can): it must be
// this user's, and no one else may write it (a group-writable one could be replaced by any
// member of a setgid project folder's group).
std::string distrust(const struct stat& st) {
  if (st.st_uid != ::geteuid()) {
    return "owned by uid " + std::to_string(st.st_uid) + ", not this user (" + uid_text() + ")";
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by other users";
  return "";
}

// Opens the folder `name` in `at` as one of this user's own (not a link: O_NOFOLLOW),
// creating it 0700 first when `create`; -1 with *why otherwise.
int open_own_folder(int at, const std::string& name, bool create, std::string* why) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(at, name.c_str(), flags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(at, name.c_str(), 0700) != 0 && errno != EEXIST) {
      *why = std::strerror(errno);
      return -1;
    }
    fd = ::openat(at, name.c_str(), flags);
  }
  if (fd < 0) {
    *why = errno == ELOOP || errno == ENOTDIR ? "not a folder (a link or a file)"
                                              : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *why = std::strerror(errno);
  } else {
    *why = distrust(st);
  }
  if (why->empty()) return fd;
  ::close(fd);
  return -1;
}

// The user's folder of `kind`, opened and checked (creating what is missing when `create`);
// -1 with *why (naming the folder) otherwise.
int open_kind_folder(const std::string& kind, bool create, std::string* why) {
  const std::string base = cache_base();
  if (base.empty()) return -1;
  if (create) {
    std::error_code ec;  // the base may be shared: created with the umask's mode, not checked
    std::filesystem::create_directories(base, ec);
  }
  UniqueFd at(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0) {
    *why = base + ": " + std::strerror(errno);
    return -1;
  }
  const std::string uid = uid_text();
  at.reset(open_own_folder(at.get(), uid, create, why));
  if (at.get() < 0) {
    *why = base + "/" + uid + ": " + *why;
    return -1;
  }
  const int fd = open_own_folder(at.get(), kind, create, why);
  if (fd < 0) *why = base + "/" + uid + "/" + kind + ": " + *why;
  return fd;
}

}  // namespace

std::string cache_dir(const std::string& kind) {
  const std::string base = cache_base();
  return base.empty() ? base : base + "/" + uid_text() + "/" + kind;
}

std::optional<std::string> read_cache_entry(const std::string& kind, const std::string& name) {
  std::string why;
  const UniqueFd dir(open_kind_folder(kind, false, &why));
  if (dir.get() < 0) return std::nullopt;
  const UniqueFd fd(
      ::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      !distrust(st).empty()) {
    return std::nullopt;
  }
  // One buffer of the file's size (a listing of a million files is ~30 MB: growing a string
  // to it costs more than reading it).
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

std::string write_cache_entry(const std::string& kind, const std::string& name,
                              std::string_view text) {
  std::string why;
  const UniqueFd dir(open_kind_folder(kind, true, &why));
  if (dir.get() < 0) return why;
  // mkstemp through the checked folder's descriptor (/proc/self/fd/N), so that the
  // temporary lands in the folder just checked even if its path is replaced meanwhile.
  std::string at = "/proc/self/fd/" + std::to_string(dir.get());
  if (::access(at.c_str(), X_OK) != 0) at = cache_dir(kind);
  std::string tmp = at + "/." + name + ".XXXXXX";
  const int out = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (out < 0) return cache_dir(kind) + ": " + std::strerror(errno);
  const std::string tmp_name = tmp.substr(at.size() + 1);
  size_t done = 0;
  int err = 0;
  while (done < text.size() && err == 0) {
    const ssize_t n = ::write(out, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  // close() too: a network filesystem may report a full disk or quota only there.
  if (::close(out) != 0 && err == 0) err = errno;
  if (err == 0 && ::renameat(dir.get(), tmp_name.c_str(), dir.get(), name.c_str()) == 0) return "";
  if (err == 0) err = errno;
  ::unlinkat(dir.get(), tmp_name.c_str(), 0);
  return cache_dir(kind) + ": " + std::strerror(err);
}

}  // namespace stoker
