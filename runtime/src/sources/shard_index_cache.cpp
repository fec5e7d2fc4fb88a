#include "sources/shard_index_cache.hpp"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <sstream>

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

std::string entry_name(const std::string& id) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".idx", fnv1a(id, kFnvOffset));
  return name;
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
  const auto id = identity(shard, stamp, variant);
  if (!id) return std::nullopt;
  const auto text = read_cache_entry("shards", entry_name(*id));
  if (!text) return std::nullopt;
  std::istringstream in(*text);
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
  const auto id = identity(shard, stamp, variant);
  if (!id) return;
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, summary.hash);
  // Ranks indexing the same shard at once agree anyway; a cache that cannot be written is
  // passed over (shard_index_cache.hpp).
  write_cache_entry("shards", entry_name(*id),
                    std::string(kMagic) + "\n" + *id + "\n" + std::to_string(summary.samples) +
                        " " + std::to_string(summary.bytes) + " " + hash + "\n");
}

}  // namespace stoker
