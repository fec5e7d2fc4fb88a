// What streaming needs to know of a shard before reading it (its sample count, for the
// ranks' equal-length rule; a hash, for the dataset fingerprint), kept in a small file per
// shard so that the pass over the shard that finds it runs once per shard version, not
// once per process: on network storage every rank of every job would otherwise read the
// whole dataset at start. The cache folder is this user's part of STOKER_CACHE_DIR, else
// $XDG_CACHE_HOME/stoker, else $HOME/.cache/stoker (cache_dir.hpp: entries another user
// could have written are not read); STOKER_CACHE_DIR=none turns it off.
// An entry is keyed by the shard's absolute path and checked against its size and
// modification time; a cache that cannot be written is passed over without a word.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stoker {

struct ShardSummary {
  uint64_t samples = 0;  // WebDataset samples (key groups with an image)
  uint64_t bytes = 0;    // image bytes
  uint64_t hash = 0;     // of the images' names and sizes and the labels, in order
};

// The folder entries go to, or "" when caching is off or there is no home.
std::string shard_cache_dir();

// What an entry is checked against: the shard's size and modification time, from one stat
// (nullopt when it cannot be stat'ed), taken once per open and given to both calls below.
struct ShardStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};
std::optional<ShardStamp> shard_stamp(const std::string& shard);

// `variant` tells apart summaries made with different reading options (labels or not).
std::optional<ShardSummary> load_shard_summary(const std::string& shard, const ShardStamp& stamp,
                                               const std::string& variant);
void store_shard_summary(const std::string& shard, const ShardStamp& stamp,
                         const std::string& variant, const ShardSummary& summary);

}  // namespace stoker
