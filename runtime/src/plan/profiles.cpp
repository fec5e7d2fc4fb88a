// Built-in profiles, the profile set's look-ups, and profile range checks.
#include "stoker/plan/profiles.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

namespace {
Profile make(std::string name, std::string description) {
  Profile p;
  p.name = std::move(name);
  p.description = std::move(description);
  return p;
}
}  // namespace

ProfileSet builtin_profiles() {
  ProfileSet set;
  // balanced: the usual advice (75 % of the non-main cores, 2 batches per worker).
  Profile balanced = make("balanced", "general purpose: 75% of the cores, 2 batches per worker");
  set.profiles[balanced.name] = balanced;

  // cv: decode/augment-bound, large samples: more workers, ~2 batches per worker,
  // pinned memory for fast H2D copies; batches assumed large.
  Profile cv = make("cv", "images/video: decode-heavy, large batches, pinned memory");
  cv.worker_fraction = 0.85;
  cv.prefetch_per_worker = 2;
  cv.max_prefetch = 32;
  cv.mem_share = 0.3;
  cv.pin_memory = PinMode::Yes;
  cv.batch_bytes = uint64_t{128} << 20;
  set.profiles[cv.name] = cv;

  // nlp: token batches are small and cheap to build: fewer workers, deeper queue.
  Profile nlp = make("nlp", "text/tokens: small samples, fewer workers, ~4-6 batches per worker");
  nlp.worker_fraction = 0.5;
  nlp.prefetch_per_worker = 5;
  nlp.min_prefetch = 4;
  nlp.max_prefetch = 128;
  nlp.mem_share = 0.15;
  nlp.batch_bytes = uint64_t{8} << 20;
  // Token batches need little CPU: cores of other NUMA nodes would add workers that only
  // pull the rank's batches across the fabric.
  nlp.spill_cores = false;
  set.profiles[nlp.name] = nlp;

  // netfs: network or spinning storage: few concurrent readers, shallow prefetch.
  Profile netfs = make("netfs",
                       "network/spinning storage: at most 4 readers, shallow prefetch, shards "
                       "streamed");
  netfs.worker_fraction = 0.5;
  netfs.prefetch_per_worker = 1;
  netfs.max_prefetch = 8;
  netfs.mem_share = 0.2;
  netfs.max_readers = 4;
  netfs.stream =
      true;  // a random open/pread per sample is the seek storm this storage cannot serve
  netfs.spill_cores = false;  // MaxReaders bounds the workers: more cores add no reader
  set.profiles[netfs.name] = netfs;
  return set;
}

const Profile& ProfileSet::get(const std::string& name) const {
  auto it = profiles.find(name);
  if (it == profiles.end())
    throw Error("profile", "unknown profile '" + name + "'", "known profiles: " + names());
  return it->second;
}

std::string ProfileSet::names() const {
  std::string out;
  for (const auto& [name, p] : profiles) out += (out.empty() ? "" : ", ") + name;
  return out;
}

ProfileSet load_profiles(const std::string& path) {
  // A folder or a device opens, reads as nothing and would give the built-ins without a
  // word: the admin's file must be a regular file.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw Error(path, std::string("cannot read the profiles file: ") + std::strerror(errno),
                "check the path and its permissions");
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(path,
                std::string("is a ") + (S_ISDIR(st.st_mode) ? "folder" : "special file") +
                    ", not a profiles file",
                "name the profiles file itself (e.g. /etc/stoker/stoker.conf)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path, std::string("cannot read the profiles file: ") + std::strerror(errno),
                "check the path and its permissions");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad() || (st.st_size > 0 && text.str().empty())) {
    throw Error(path, "error while reading the profiles file", "check the file");
  }
  return parse_profiles(text.str(), path);
}

ProfileSet profiles_or_builtins(const std::optional<std::string>& file) {
  return file ? load_profiles(*file) : builtin_profiles();
}

std::string check_profile(const Profile& p) {
  using values::format_fraction;
  auto whole = [](const char* key, int v, int lo, int hi) -> std::string {
    if (v >= lo && v <= hi) return {};
    return std::string(key) + "=" + std::to_string(v) + " is not in " + std::to_string(lo) + ".." +
           std::to_string(hi);
  };
  if (!values::valid_name(p.name))
    return "profile name '" + p.name + "' is not 1-64 letters, digits, '-' or '_'";
  if (!(p.worker_fraction > 0 && p.worker_fraction <= 1))
    return "WorkerFraction=" + format_fraction(p.worker_fraction) + " is not in (0,1]";
  if (!(p.mem_share > 0 && p.mem_share <= 1))
    return "MemShare=" + format_fraction(p.mem_share) + " is not in (0,1]";
  for (std::string e :
       {whole("MainCores", p.main_cores, 1, limits::kMaxMainCores),
        whole("PrefetchPerWorker", p.prefetch_per_worker, 1, limits::kMaxPrefetchPerWorker),
        whole("MinPrefetch", p.min_prefetch, 1, limits::kMaxPrefetch),
        whole("MaxPrefetch", p.max_prefetch, 1, limits::kMaxPrefetch),
        p.max_readers == 0 ? std::string()
                           : whole("MaxReaders", p.max_readers, 1, limits::kMaxWorkers),
        p.shuffle_buffer >= 1 && p.shuffle_buffer <= uint64_t{limits::kMaxShuffleBuffer}
            ? std::string()
            : "ShuffleBuffer=" + std::to_string(p.shuffle_buffer) + " is not in 1.." +
                  std::to_string(limits::kMaxShuffleBuffer)})
    if (!e.empty()) return e;
  if (p.min_prefetch > p.max_prefetch)
    return "MinPrefetch=" + std::to_string(p.min_prefetch) +
           " is above MaxPrefetch=" + std::to_string(p.max_prefetch);
  return {};
}

}  // namespace stoker
