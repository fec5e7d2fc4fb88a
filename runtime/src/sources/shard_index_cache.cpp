#include "sources/shard_index_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/fnv1a.hpp"
#include "sources/cache_dir.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "stoker-shard-index v1";

// "path=ABS size=S mtime=NS variant=V": what an entry must match to be used.
std::optional<std::string> identity(const std::string& shard, const ShardStamp& stamp,
                                    const std::string& variant) {
  std::error_code ec;
  const fs::path abs = fs::absolute(shard, ec);
  if (ec) return std::nullopt;
  return "path=" + abs.string() + " size=" + std::to_string(stamp.size) +
         " mtime=" + std::to_string(stamp.mtime_ns) + " variant=" + variant;
}

std::string entry_path(const std::string& dir, const std::string& id) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".idx", fnv1a(id, kFnvOffset));
  return dir + "/" + name;
}

}  // namespace

std::string shard_cache_dir() {
  return cache_dir("shards");
}

std::optional<ShardStamp> shard_stamp(const std::string& shard) {
  struct stat st {};
  if (::stat(shard.c_str(), &st) != 0) return std::nullopt;
  return ShardStamp{static_cast<uint64_t>(st.st_size),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::optional<ShardSummary> load_shard_summary(const std::string& shard, const ShardStamp& stamp,
                                               const std::string& variant) {
  const std::string dir = shard_cache_dir();
  const auto id = identity(shard, stamp, variant);
  if (dir.empty() || !id) return std::nullopt;
  std::ifstream in(entry_path(dir, *id));
  std::string magic_line, id_line;
  if (!std::getline(in, magic_line) || magic_line != kMagic) return std::nullopt;
  if (!std::getline(in, id_line) || id_line != *id) return std::nullopt;
  ShardSummary s;
  std::string hash;
  if (!(in >> s.samples >> s.bytes >> hash)) return std::nullopt;
  const auto parsed = values::parse_hex(hash);
  if (!parsed) return std::nullopt;
  s.hash = *parsed;
  return s;
}

void store_shard_summary(const std::string& shard, const ShardStamp& stamp,
                         const std::string& variant, const ShardSummary& summary) {
  const std::string dir = shard_cache_dir();
  const auto id = identity(shard, stamp, variant);
  if (dir.empty() || !id) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = entry_path(dir, *id);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016" PRIx64, summary.hash);
    out << kMagic << '\n'
        << *id << '\n'
        << summary.samples << ' ' << summary.bytes << ' ' << hash << '\n';
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);  // atomic: ranks indexing the same shard at once agree anyway
  if (ec) fs::remove(tmp, ec);
}

}  // namespace stoker
