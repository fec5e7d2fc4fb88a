// The plugin's topology cache: this node's hwloc XML in a root-owned folder, so that only
// the first step after boot pays for discovery (see load_topology_cached in topology.hpp).
// Every file access goes through the folder's descriptor (openat, renameat), so the folder
// that was checked is the one read and written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/unique_fd.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/topology/topology.hpp"
#include "topology/hwloc_xml.hpp"

namespace stoker {

namespace {

constexpr const char* kBootId = "/proc/sys/kernel/random/boot_id";
// A topology XML is kilobytes to a few megabytes; anything far larger is not ours.
constexpr off_t kMaxCacheBytes = 64 << 20;

std::string errno_text() {
  return std::strerror(errno);
}

// "" when only root may change what `st` describes, else why not.
std::string untrusted(const struct stat& st, const std::string& what) {
  if (st.st_uid != 0) return what + " is owned by uid " + std::to_string(st.st_uid) + ", not root";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return what + " is writable by others than root (mode " + mode + ")";
  }
  return "";
}

// Opens the folder and checks it; -1 with `why` filled when it is absent or not trusted.
int open_trusted_dir(const std::string& dir, std::string* why) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *why = "folder " + dir + (errno == ENOENT ? " is absent" : ": " + errno_text());
    return -1;
  }
  struct stat st {};
  *why = ::fstat(fd, &st) != 0 ? "folder " + dir + ": " + errno_text()
                               : untrusted(st, "folder " + dir);
  if (!why->empty()) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The cache file's text; nullopt with `why` when absent, not trusted or unreadable.
std::optional<std::string> read_trusted(int dir_fd, const std::string& name,
                                        const std::string& path, std::string* why) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    *why = errno == ENOENT ? path + " is absent" : path + ": " + errno_text();
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *why = path + ": " + errno_text();
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxCacheBytes) {
    *why = path + " is not a regular file of at most 64 MiB";
    return std::nullopt;
  }
  if (*why = untrusted(st, path); !why->empty()) return std::nullopt;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);  // a file cut short is caught by the XML check
  return text;
}

// The cached topology; nullopt with `why` when it cannot be used.
std::optional<Topology> read_cache(const std::string& dir, const std::string& name,
                                   const std::string& key, bool with_io, std::string* why) {
  const std::string path = dir + "/" + name;
  UniqueFd dir_fd(open_trusted_dir(dir, why));
  if (dir_fd.get() < 0) return std::nullopt;
  const std::optional<std::string> text = read_trusted(dir_fd.get(), name, path, why);
  if (!text) return std::nullopt;
  try {
    detail::XmlKey recorded;
    Topology t = detail::load_this_machine_xml(*text, path, with_io, &recorded);
    const std::string hwloc = detail::hwloc_runtime_version();
    if (recorded.cache_key != key || recorded.hwloc_version != hwloc) {
      *why = path + " records key '" + recorded.cache_key + "' and hwloc " +
             recorded.hwloc_version + ", not '" + key + "' and hwloc " + hwloc;
      return std::nullopt;
    }
    return t;
  } catch (const Error&) {
    *why = path + " is not a valid hwloc XML topology";
    return std::nullopt;
  }
}

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Writes `text` to dir/name atomically: a temporary file beside it, fsync, rename, fsync of
// the folder. "" when written, else why not (the temporary file is removed).
std::string write_atomically(int dir_fd, const std::string& name, const std::string& text) {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::string tmp = "." + name + "." + std::to_string(::getpid()) + "." +
                          std::to_string(static_cast<unsigned long long>(stamp));
  UniqueFd fd(
      ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0) return "cannot create a temporary file: " + errno_text();
  // fchmod: the umask must not narrow what every user of the node reads.
  const bool ok = write_all(fd.get(), text) && ::fchmod(fd.get(), 0644) == 0 &&
                  ::fsync(fd.get()) == 0 &&
                  ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) == 0;
  if (!ok) {
    const std::string why = errno_text();
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return "cannot write it: " + why;
  }
  ::fsync(dir_fd);  // the rename itself survives a crash
  return "";
}

// Writes `live` to the cache; "" when written, else why not.
std::string write_cache(const std::string& dir, const std::string& name, const std::string& key,
                        const Topology& live) {
  if (::geteuid() != 0) return "only root writes the cache";
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return "cannot create folder " + dir + ": " + errno_text();
  }
  std::string why;
  UniqueFd dir_fd(open_trusted_dir(dir, &why));
  if (dir_fd.get() < 0) return why;
  try {
    return write_atomically(dir_fd.get(), name, detail::export_this_machine_xml(live, key));
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

std::string topology_cache_key(bool with_io) {
  const std::optional<std::string> boot_id = read_first_line(kBootId);
  if (!boot_id || boot_id->empty() ||
      boot_id->find_first_not_of("0123456789abcdef-") != std::string::npos) {
    throw Error(kBootId, boot_id ? "not a boot id: '" + *boot_id + "'" : "cannot be read",
                "mount /proc; without a boot id the topology is discovered at every step");
  }
  return *boot_id + "-hwloc" + detail::hwloc_runtime_version() + (with_io ? "" : "-noio");
}

CachedTopology load_topology_cached(const std::string& dir, bool with_io) {
  CachedTopology c;
  std::string key;
  try {
    key = topology_cache_key(with_io);
  } catch (const Error& e) {
    c.note = std::string("no cache key: ") + e.what();
    c.topology = load_topology(with_io);
    return c;
  }
  const std::string name = "topology-" + key + ".xml";
  c.path = dir + "/" + name;
  std::string not_read;
  if (auto cached = read_cache(dir, name, key, with_io, &not_read)) {
    c.topology = std::move(*cached);
    c.topology.source = "this machine";
    c.from_cache = true;
    return c;
  }
  c.topology = load_topology(with_io);
  const std::string not_written = write_cache(dir, name, key, c.topology);
  c.written = not_written.empty();
  c.note = "not read: " + not_read + (c.written ? "" : "; not written: " + not_written);
  return c;
}

}  // namespace stoker
